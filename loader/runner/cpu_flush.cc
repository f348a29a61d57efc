// CpuFlush: see cpu_flush.h.
#include "cpu_flush.h"

#include "kernelgate/cache_flush.h"
#include "kernelgate/protocol.h"

#include <algorithm>
#include <new>

namespace kg::runner {

uint32_t CpuFlush::run(int64_t bytes) {
  if (bytes < 0) return 0;
  const size_t want = bytes == 0 ? protocol::cpu_flush_default_bytes() : static_cast<size_t>(std::min<int64_t>(bytes, int64_t{1} << 32));
  if (buffer_.size() < want) {
    try {
      buffer_.assign(want, 0);
    } catch (const std::bad_alloc&) {
      buffer_.clear();
      return protocol::kEvidenceFlushSkipped;
    }
  }
  ++counter_;
  volatile uint8_t* p = buffer_.data();
  for (size_t i = 0; i < want; i += 64) p[i] = static_cast<uint8_t>(p[i] + counter_);
  return 0;
}

}  // namespace kg::runner

// The CPU cache flush before a timed call: a walk that writes one byte per cache line of a
// buffer larger than the last-level cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kg::runner {

class CpuFlush {
 public:
  // Writes `bytes` of the buffer (0: the default, kernelgate/cache_flush.h; < 0: nothing),
  // growing it first when needed. Returns kEvidenceFlushSkipped when there was no memory for it.
  uint32_t run(int64_t bytes);
  bool allocated() const { return !buffer_.empty(); }

 private:
  std::vector<uint8_t> buffer_;
  uint8_t counter_ = 0;  // changes every flush, so every walk really writes
};

}  // namespace kg::runner

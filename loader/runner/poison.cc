// Allocation poisoning: see instrument.h.
#include "instrument.h"

#include <ATen/ATen.h>
#include <c10/util/Flags.h>

#include <malloc.h>

#include <cstdlib>
#include <cstring>

// Defined in libc10 (c10/core/impl/alloc_cpu.cpp in 2.x, c10/core/CPUAllocator.cpp in 1.13);
// 1.13 declares it in no header. A repeated declaration is harmless where one does.
C10_DECLARE_bool(caffe2_cpu_allocator_do_junk_fill);

namespace kg::runner {
namespace {

// Chunks up to this size come from glibc's per-thread cache, which M_PERTURB does not touch.
constexpr size_t kSmallChunkMax = 1024;
constexpr int kChunksPerSize = 7;  // glibc's default tcache_count

// Refills the calling thread's small-chunk cache with `byte`: freed last, handed out first.
void refill_small_chunks(unsigned char byte) {
  for (size_t size = 16; size <= kSmallChunkMax; size += 16) {
    void* chunks[kChunksPerSize] = {};
    for (auto& c : chunks) {
      c = std::malloc(size);
      if (c) std::memset(c, byte, size);
    }
    for (int i = kChunksPerSize - 1; i >= 0; --i) std::free(chunks[i]);
  }
}

uint8_t g_malloc_fill = 0;  // what malloc fills with during the current (or last) poisoned call

// A byte only the poisoning writes: of c10's 0x7fedbeef words, or malloc's fill. Anything else
// in a bool (a SIMD mask's 0xff) is left for the wire decoder to refuse.
bool is_poison_byte(uint8_t b) { return b == 0xef || b == 0xbe || b == 0xed || b == 0x7f || (g_malloc_fill && b == g_malloc_fill); }

}  // namespace

void poison_arm(uint32_t call_no) {
  FLAGS_caffe2_cpu_allocator_do_junk_fill = true;
  // A byte per call, never 0 (0 switches perturbation off); malloc fills with its complement.
  const int perturb = 0x21 + static_cast<int>((call_no * 37u) % 0xbd);
  mallopt(M_PERTURB, perturb);
  g_malloc_fill = static_cast<uint8_t>(perturb ^ 0xff);
  refill_small_chunks(g_malloc_fill);
}

bool poison_disarm() {
  const bool intact = FLAGS_caffe2_cpu_allocator_do_junk_fill;
  FLAGS_caffe2_cpu_allocator_do_junk_fill = false;
  mallopt(M_PERTURB, 0);
  return intact;
}

uint32_t settle_bool_poison(const std::vector<c10::IValue>& values) {
  uint32_t ev = 0;
  for (const at::Tensor& t : cpu_tensors(values)) {
    if (t.scalar_type() != at::kBool || !t.has_storage()) continue;
    auto* p = static_cast<uint8_t*>(t.storage().unsafeGetStorageImpl()->data_ptr().get());
    const size_t n = t.storage().nbytes();
    for (size_t i = 0; p && i < n; ++i)
      if (p[i] > 1 && is_poison_byte(p[i])) {
        p[i] = 1;
        ev = protocol::kEvidenceUnwrittenBool;
      }
  }
  return ev;
}

}  // namespace kg::runner

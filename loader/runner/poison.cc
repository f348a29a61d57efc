// Allocation poisoning: see instrument.h.
#include "instrument.h"

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

}  // namespace

void poison_arm(uint32_t call_no) {
  FLAGS_caffe2_cpu_allocator_do_junk_fill = true;
  // A byte per call, never 0 (0 switches perturbation off); malloc fills with its complement.
  const int perturb = 0x21 + static_cast<int>((call_no * 37u) % 0xbd);
  mallopt(M_PERTURB, perturb);
  refill_small_chunks(static_cast<unsigned char>(perturb ^ 0xff));
}

bool poison_disarm() {
  const bool intact = FLAGS_caffe2_cpu_allocator_do_junk_fill;
  FLAGS_caffe2_cpu_allocator_do_junk_fill = false;
  mallopt(M_PERTURB, 0);
  return intact;
}

}  // namespace kg::runner

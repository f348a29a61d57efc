#include "kernelgate/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

// Headers older than Linux 5.14 lack the advice values; the kernel then refuses them (EINVAL),
// which is the documented "false" of a hint not taken.
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace kg::protocol {
namespace {

bool populate(const uint8_t* base, size_t offset, size_t length, int advice) {
  if (length < kPrefaultFrom) return true;
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(base) + offset;
  const uintptr_t start = first / page * page;  // inside the same mapping, which starts on a page
  return ::madvise(reinterpret_cast<void*>(start), first + length - start, advice) == 0;
}

}  // namespace

bool prefault_for_writing(uint8_t* base, size_t offset, size_t length) { return populate(base, offset, length, MADV_POPULATE_WRITE); }

bool prefault_for_reading(const uint8_t* base, size_t offset, size_t length) { return populate(base, offset, length, MADV_POPULATE_READ); }

}  // namespace kg::protocol

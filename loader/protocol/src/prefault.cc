#include "kernelgate/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

namespace kg::protocol {

bool prefault_for_writing(uint8_t* base, size_t offset, size_t length) {
#if defined(MADV_POPULATE_WRITE)
  if (length < kPrefaultFrom) return true;
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t start = offset / page * page;
  return ::madvise(base + start, offset + length - start, MADV_POPULATE_WRITE) == 0;
#else
  (void)base, (void)offset, (void)length;
  return false;
#endif
}

}  // namespace kg::protocol

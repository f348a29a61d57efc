// Prefaulting a call region's pages before a large write into them, or a large read of them.
//
// A call's region is a fresh memfd: each side's first write to each of its 4 KiB pages is a page
// fault, and for the size ladder's 16 MB rung those faults cost more than the copy itself. The
// other side's first read of each page it did not write faults too, to map it. Asking the kernel
// for the pages of the range about to be written or read in one go (MADV_POPULATE_WRITE,
// MADV_POPULATE_READ, Linux 5.14) saves most of that.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kg::protocol {

// Prefaults the pages of [base + offset, base + offset + length) for writing; the range lies
// inside memory mapped writable (from the page it starts in). A hint only:
// false where the kernel lacks it or refuses, and then the writes fault the pages in one by one
// as they always did.
// Ranges under kPrefaultFrom are left alone (true): a system call costs about what a few page
// faults do. A timed exchange's value sets, up to hundreds of small ones, are prefaulted as one
// range for that reason, not one by one.
inline constexpr size_t kPrefaultFrom = size_t{256} << 10;
bool prefault_for_writing(uint8_t* base, size_t offset, size_t length);
// The same for reading a range the other side wrote (mapped readable).
bool prefault_for_reading(const uint8_t* base, size_t offset, size_t length);

}  // namespace kg::protocol

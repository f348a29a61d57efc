// prefault_for_writing (kernelgate/prefault.h): the pages of a large range are resident
// afterwards, those outside it are not, and the bytes are untouched; a small range is left alone.
#include "kernelgate/mapping.h"
#include "kernelgate/prefault.h"
#include "kernelgate/unique_fd.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

namespace {

// Which of the mapping's pages are resident.
std::vector<bool> resident(uint8_t* base, size_t bytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> v((bytes + page - 1) / page);
  EXPECT_EQ(::mincore(base, bytes, v.data()), 0);
  std::vector<bool> out;
  for (unsigned char c : v) out.push_back(c & 1);
  return out;
}

}  // namespace

TEST(Prefault, TheRangesPagesAreResidentAfterwardsAndNoOthers) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t bytes = 256 * page;
  kg::UniqueFd fd(::memfd_create("kg-prefault-test", MFD_CLOEXEC));
  ASSERT_TRUE(fd);
  ASSERT_EQ(::ftruncate(fd.get(), static_cast<off_t>(bytes)), 0);
  kg::Mapping map(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0), bytes);
  ASSERT_TRUE(map);
  for (bool r : resident(map.data(), bytes)) ASSERT_FALSE(r) << "a fresh memfd has no pages yet";
  // Under kPrefaultFrom: left alone.
  ASSERT_TRUE(kg::protocol::prefault_for_writing(map.data(), 200 * page, kg::protocol::kPrefaultFrom - 1));
  for (bool r : resident(map.data(), bytes)) ASSERT_FALSE(r) << "a small range is not prefaulted";
  // From the middle of page 10 to the middle of page 10 + n: pages 10..10 + n whole.
  const size_t n = kg::protocol::kPrefaultFrom / page + 1;
  ASSERT_TRUE(kg::protocol::prefault_for_writing(map.data(), 10 * page + page / 2, n * page)) << "this kernel has MADV_POPULATE_WRITE";
  const std::vector<bool> after = resident(map.data(), bytes);
  for (size_t p = 0; p < after.size(); ++p) EXPECT_EQ(after[p], p >= 10 && p <= 10 + n) << "page " << p;
  for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(map.data()[i], 0) << i;
  EXPECT_TRUE(kg::protocol::prefault_for_writing(map.data(), 0, 0)) << "an empty range";
}

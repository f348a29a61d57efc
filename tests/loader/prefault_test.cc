// prefault_for_writing (kernelgate/prefault.h): the pages of a large range are resident
// afterwards, those outside it are not, and the bytes are untouched; a small range is left alone.
// prefault_for_reading: another mapping's pages are mapped here without a fault per page.
#include "kernelgate/mapping.h"
#include "kernelgate/prefault.h"
#include "kernelgate/unique_fd.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
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

long minor_faults() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Minor faults while reading every page of `bytes` from `base`.
long faults_reading(const uint8_t* base, size_t bytes, size_t page) {
  volatile uint8_t sink = 0;
  const long before = minor_faults();
  for (size_t i = 0; i < bytes; i += page) sink = sink + base[i];
  return minor_faults() - before;
}

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

// A fresh memfd of `bytes`, and a mapping of it with `prot`.
struct Region {
  kg::UniqueFd fd;
  kg::Mapping map;
};
Region fresh_region(const char* name, size_t bytes, int prot) {
  Region r{kg::UniqueFd(::memfd_create(name, MFD_CLOEXEC)), {}};
  EXPECT_TRUE(r.fd);
  EXPECT_EQ(::ftruncate(r.fd.get(), static_cast<off_t>(bytes)), 0);
  r.map = kg::Mapping(::mmap(nullptr, bytes, prot, MAP_SHARED, r.fd.get(), 0), bytes);
  EXPECT_TRUE(r.map);
  return r;
}

}  // namespace

TEST(Prefault, TheRangesPagesAreResidentAfterwardsAndNoOthers) {
  const size_t page = kPage;
  const size_t bytes = 256 * page;
  Region region = fresh_region("kg-prefault-test", bytes, PROT_READ | PROT_WRITE);
  ASSERT_TRUE(region.map);
  const kg::Mapping& map = region.map;
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

TEST(Prefault, ReadingMapsTheOtherSidesPagesWithoutAFaultEach) {
  const size_t page = kPage, bytes = 512 * kPage;
  // The writer's side: every page written through its own mapping.
  Region writer = fresh_region("kg-prefault-read-test", bytes, PROT_READ | PROT_WRITE);
  ASSERT_TRUE(writer.map);
  for (size_t i = 0; i < bytes; ++i) writer.map.data()[i] = static_cast<uint8_t>(i * 7);
  const int fd = writer.fd.get();
  // The reader's side: two fresh mappings of the same pages, read page by page.
  kg::Mapping plain(::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0), bytes);
  kg::Mapping prefaulted(::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0), bytes);
  ASSERT_TRUE(plain && prefaulted);
  // The kernel maps a few neighbours per fault (fault-around), so the plain read faults on a
  // fraction of its pages; the prefaulted one on none.
  const long plain_faults = faults_reading(plain.data(), bytes, page);
  ASSERT_TRUE(kg::protocol::prefault_for_reading(prefaulted.data(), 0, bytes)) << "this kernel has MADV_POPULATE_READ";
  const long prefaulted_faults = faults_reading(prefaulted.data(), bytes, page);
  EXPECT_GE(plain_faults, 8) << "reading a fresh mapping faults";
  EXPECT_LE(prefaulted_faults, 2) << "against " << plain_faults << " without";
  for (size_t i = 0; i < bytes; i += 997) ASSERT_EQ(prefaulted.data()[i], static_cast<uint8_t>(i * 7)) << i;
  // Under kPrefaultFrom: left alone.
  kg::Mapping small(::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0), bytes);
  ASSERT_TRUE(kg::protocol::prefault_for_reading(small.data(), 0, kg::protocol::kPrefaultFrom - 1));
  EXPECT_GE(faults_reading(small.data(), bytes, page), 8) << "a small range is not prefaulted";
}

// RulesElf: the ELF64 reader (policies/src/elf_symbols.cc) on shared objects g++ builds here,
// on system libraries cross-checked against the symbol tables nm would print, and on
// truncated, corrupted and hostile inputs, which must throw std::runtime_error naming the
// file and never crash or read outside the bytes (the fuzz target checks the same under ASan).
#include "rules_test_util.h"

#include <cstring>
#include <random>

namespace kg::policy::test {
namespace {

class RulesElf : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new Scratch();
    plain_ = scratch_->shared_object("plain", R"(
#include <cstring>
#include <cmath>
#include <cstdio>
extern "C" int kg_say() { return puts("kg"); }
extern "C" double kg_exported(double x) { return std::sqrt(x) + std::strlen("abc"); }
static int kg_hidden() { return 1; }
__attribute__((visibility("hidden"))) int kg_hidden_vis() { return kg_hidden(); }
extern "C" void kg_weak_user();
extern "C" __attribute__((weak)) void kg_weak_import();
extern "C" int kg_call_weak() { if (kg_weak_import) kg_weak_import(); return kg_hidden_vis(); }
struct Init { Init() { kg_exported(2); } } init_object;
)");
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  static Scratch* scratch_;
  static std::string plain_;
};
Scratch* RulesElf::scratch_ = nullptr;
std::string RulesElf::plain_;

TEST_F(RulesElf, ReadsImportsExportsAndNeeded) {
  ASSERT_FALSE(plain_.empty());
  const ArtifactInfo info = read_artifact(plain_);
  EXPECT_EQ(info.path, plain_);
  EXPECT_TRUE(contains(info.exports, "kg_exported"));
  EXPECT_TRUE(contains(info.exports, "kg_call_weak"));
  EXPECT_FALSE(contains(info.exports, "_ZL9kg_hiddenv"));      // static: local
  EXPECT_FALSE(contains(info.exports, "_Z13kg_hidden_visv"));  // hidden visibility
  EXPECT_TRUE(contains(info.imports, "puts"));
  EXPECT_TRUE(contains(info.imports, "kg_weak_import"));
  EXPECT_TRUE(contains(info.weak_imports, "kg_weak_import"));
  EXPECT_FALSE(contains(info.exports, "kg_weak_import"));
  EXPECT_TRUE(contains(info.needed, "libc.so.6"));
  EXPECT_FALSE(info.textrel);
  EXPECT_FALSE(info.wx_segment);
  EXPECT_FALSE(info.exec_stack);
  EXPECT_GE(info.init_array_size, 1u);  // the static Init object's constructor
}

TEST_F(RulesElf, SonameAndRuntimeLookupStrings) {
  const std::string so = scratch_->shared_object("named", R"(
#include <dlfcn.h>
extern "C" void* kg_find() { return dlsym(dlopen("libopenblas.so.0", RTLD_NOW), "cblas_sgemm"); }
)",
                                                 "-Wl,-soname,libkgnamed.so.1");
  ASSERT_FALSE(so.empty());
  const ArtifactInfo info = read_artifact(so);
  EXPECT_EQ(info.soname, "libkgnamed.so.1");
  EXPECT_TRUE(contains(info.imports, "dlsym"));
  EXPECT_TRUE(contains(info.imports, "dlopen"));
  EXPECT_TRUE(contains(info.library_strings, "libopenblas.so.0"));
  EXPECT_TRUE(contains(info.library_strings, "cblas_sgemm"));
}

TEST_F(RulesElf, TextRelocationsAndExecutableStack) {
  // Non-PIC code in a shared object makes the linker emit text relocations.
  const std::string so = scratch_->shared_object("textrel", R"(
extern int kg_counter;
int kg_counter = 0;
// A 64-bit absolute address in code: the loader must patch .text (R_X86_64_64 there).
extern "C" long kg_read() { long v; asm volatile("movabsq $kg_counter, %0" : "=r"(v)); return v; }
)",
                                                 "-Wl,-z,notext -Wl,-z,execstack");
  ASSERT_FALSE(so.empty());
  const ArtifactInfo info = read_artifact(so);
  EXPECT_TRUE(info.textrel);
  EXPECT_TRUE(info.exec_stack);
}

TEST_F(RulesElf, WritableExecutableSegment) {
  // A section flagged alloc+write+exec makes the linker map a segment RWX.
  const std::string so = scratch_->shared_object("wx", R"(
asm(".section .kgwx,\"awx\",@progbits\n.byte 0xc3\n.previous");
extern "C" int kg_f() { return 3; }
)",
                                                 "-Wl,--no-warn-rwx-segments");
  if (so.empty()) return;  // failure already recorded
  const ArtifactInfo info = read_artifact(so);
  EXPECT_TRUE(info.wx_segment);
}

// Every dynamic symbol nm would list for a large real library, against what libtorch's own
// build says: the counts from the hash tables and relocations cover the whole table.
TEST_F(RulesElf, SystemLibrariesParse) {
  for (const char* lib : {"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libm.so.6"}) {
    if (!std::filesystem::exists(lib)) continue;
    const ArtifactInfo info = read_artifact(lib);
    EXPECT_GT(info.exports.size(), 100u) << lib;
  }
  const ArtifactInfo libc = read_artifact("/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_TRUE(contains(libc.exports, "clock_gettime"));
  EXPECT_TRUE(contains(libc.exports, "memcpy"));
  EXPECT_EQ(libc.soname, "libc.so.6");
}

TEST_F(RulesElf, MissingFileNamesIt) {
  try {
    read_artifact(scratch_->dir() + "/nope.so");
    FAIL() << "expected a runtime_error";
  } catch (const std::runtime_error& e) { EXPECT_NE(std::string(e.what()).find("nope.so: cannot open"), std::string::npos) << e.what(); }
}

std::string error_of(const std::vector<uint8_t>& bytes, const std::string& name = "bad.so") {
  try {
    read_artifact_bytes(bytes.data(), bytes.size(), name);
  } catch (const std::runtime_error& e) { return e.what(); }
  return "";
}

TEST_F(RulesElf, RejectsNonElfAndWrongKinds) {
  EXPECT_NE(error_of({}).find("bad.so: truncated"), std::string::npos) << error_of({});
  std::vector<uint8_t> text(200, 'a');
  EXPECT_NE(error_of(text).find("not an ELF file"), std::string::npos);
  std::vector<uint8_t> b = file_bytes(plain_);
  auto set = [](std::vector<uint8_t> v, size_t off, uint8_t x) {
    v[off] = x;
    return v;
  };
  EXPECT_NE(error_of(set(b, 4, 1)).find("not a 64-bit"), std::string::npos);
  EXPECT_NE(error_of(set(b, 5, 2)).find("not a little-endian"), std::string::npos);
  EXPECT_NE(error_of(set(b, 16, 2)).find("not a shared object"), std::string::npos);
  EXPECT_NE(error_of(set(b, 18, 3)).find("unsupported machine"), std::string::npos);
  const ArtifactInfo ok = read_artifact_bytes(b.data(), b.size(), "ok.so");
  EXPECT_EQ(ok.path, "ok.so");
}

TEST_F(RulesElf, HostileHeaderFieldsThrow) {
  const std::vector<uint8_t> good = file_bytes(plain_);
  auto put64 = [](std::vector<uint8_t> v, size_t off, uint64_t x) {
    std::memcpy(&v[off], &x, 8);
    return v;
  };
  auto put16 = [](std::vector<uint8_t> v, size_t off, uint16_t x) {
    std::memcpy(&v[off], &x, 2);
    return v;
  };
  EXPECT_NE(error_of(put64(good, 32, ~uint64_t(0) - 3)).find("program header table"), std::string::npos);  // e_phoff
  EXPECT_NE(error_of(put16(good, 56, 0xfffe)).find("do not fit"), std::string::npos);                      // e_phnum
  EXPECT_NE(error_of(put16(good, 54, 8)).find("smaller than an Elf64_Phdr"), std::string::npos);           // e_phentsize
  EXPECT_NE(error_of(put16(good, 56, 0)).find("no program headers"), std::string::npos);
  // Every program header's offset and size fields pointed outside the file, one at a time.
  uint64_t phoff;
  uint16_t phnum;
  std::memcpy(&phoff, &good[32], 8);
  std::memcpy(&phnum, &good[56], 2);
  for (uint16_t i = 0; i < phnum; ++i)
    for (size_t field : {8, 16, 32, 40}) {
      for (uint64_t v : {uint64_t(good.size()), ~uint64_t(0), uint64_t(1) << 63}) {
        std::string err = error_of(put64(good, phoff + i * 56 + field, v));
        // Either rejected with the file named, or (a field the loader does not need) parsed.
        if (!err.empty()) EXPECT_EQ(err.rfind("bad.so: ", 0), 0u) << err;
      }
    }
}

// Every truncation of a real artifact: each either parses (trailing sections the loader does
// not need) or throws with the file named, never anything else.
TEST_F(RulesElf, EveryTruncationThrowsOrParses) {
  const std::vector<uint8_t> good = file_bytes(plain_);
  size_t threw = 0;
  for (size_t n = 0; n < good.size(); n += (n < 8192 ? 1 : 61)) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<long>(n));
    try {
      read_artifact_bytes(cut.data(), cut.size(), "cut.so");
    } catch (const std::runtime_error& e) {
      ASSERT_EQ(std::string(e.what()).rfind("cut.so: ", 0), 0u) << e.what();
      threw++;
    }
  }
  EXPECT_GT(threw, 100u);
}

// Random corruption of the dynamic section, symbol and string tables and hash tables.
TEST_F(RulesElf, RandomCorruptionNeverCrashes) {
  const std::vector<uint8_t> good = file_bytes(plain_);
  std::mt19937_64 rng(7);
  const size_t head = std::min<size_t>(good.size(), 16384);  // the tables the reader walks live here
  size_t parsed = 0, threw = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::vector<uint8_t> b = good;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < flips; ++k) {
      const size_t at = rng() % head;
      switch (rng() % 3) {
        case 0: b[at] = static_cast<uint8_t>(rng()); break;
        case 1: b[at] = 0xff; break;
        default:
          if (at + 8 <= b.size()) {
            uint64_t v = rng() % 3 ? rng() : ~uint64_t(0);
            std::memcpy(&b[at], &v, 8);
          }
      }
    }
    try {
      read_artifact_bytes(b.data(), b.size(), "fuzz.so");
      parsed++;
    } catch (const std::runtime_error&) { threw++; }
  }
  EXPECT_GT(parsed, 0u);
  EXPECT_GT(threw, 0u);
}

// A dynamic section without its terminator, and a string-table size that runs off the file.
TEST_F(RulesElf, DynamicSectionLies) {
  std::vector<uint8_t> good = file_bytes(plain_);
  uint64_t phoff;
  uint16_t phnum;
  std::memcpy(&phoff, &good[32], 8);
  std::memcpy(&phnum, &good[56], 2);
  uint64_t dyn_off = 0, dyn_size = 0;
  for (uint16_t i = 0; i < phnum; ++i) {
    uint32_t type;
    std::memcpy(&type, &good[phoff + i * 56], 4);
    if (type == 2) {
      std::memcpy(&dyn_off, &good[phoff + i * 56 + 8], 8);
      std::memcpy(&dyn_size, &good[phoff + i * 56 + 32], 8);
    }
  }
  ASSERT_GT(dyn_size, 0u);
  {
    std::vector<uint8_t> b = good;  // every entry's tag set to DT_NEEDED with a wild offset
    for (uint64_t at = dyn_off; at + 16 <= dyn_off + dyn_size; at += 16) {
      int64_t tag = 1;
      uint64_t val = ~uint64_t(0) >> 1;
      std::memcpy(&b[at], &tag, 8);
      std::memcpy(&b[at + 8], &val, 8);
    }
    EXPECT_NE(error_of(b).find("DT_NULL"), std::string::npos) << error_of(b);
  }
  {
    std::vector<uint8_t> b = good;  // DT_STRSZ made huge
    for (uint64_t at = dyn_off; at + 16 <= dyn_off + dyn_size; at += 16) {
      int64_t tag;
      std::memcpy(&tag, &b[at], 8);
      if (tag == 10) {
        uint64_t val = uint64_t(1) << 40;
        std::memcpy(&b[at + 8], &val, 8);
      }
    }
    EXPECT_NE(error_of(b).find("string table"), std::string::npos) << error_of(b);
  }
  {
    std::vector<uint8_t> b = good;  // DT_GNU_HASH / DT_HASH pointed at an address no segment maps
    for (uint64_t at = dyn_off; at + 16 <= dyn_off + dyn_size; at += 16) {
      int64_t tag;
      std::memcpy(&tag, &b[at], 8);
      if (tag == 0x6ffffef5 || tag == 4) {
        uint64_t val = uint64_t(1) << 50;
        std::memcpy(&b[at + 8], &val, 8);
      }
    }
    EXPECT_NE(error_of(b).find("PT_LOAD"), std::string::npos) << error_of(b);
  }
}

}  // namespace
}  // namespace kg::policy::test

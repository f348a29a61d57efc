// RulesCounter: timer_tampering's time-stamp-counter half. The x86-64 length decoder
// (policies/src/x86_decode.h) on known encodings and on whole system libraries checked against
// objdump, and the rule on shared objects g++ builds here: real counter reads (intrinsics, inline
// asm, a jump into another instruction's immediate) are found; the same bytes inside honest
// instructions' operands are not.
#include "../../policies/src/x86_decode.h"
#include "rules_test_util.h"

#include <cstdio>
#include <memory>

namespace kg::policy::test {
namespace {

size_t length_of(std::vector<uint8_t> bytes) {
  auto insn = x86::decode(bytes.data(), bytes.size());
  return insn ? insn->length : 0;
}

TEST(RulesCounter, DecoderLengthsOfKnownEncodings) {
  EXPECT_EQ(length_of({0x0f, 0x31}), 2u);                           // rdtsc
  EXPECT_EQ(length_of({0x0f, 0x01, 0xf9}), 3u);                     // rdtscp
  EXPECT_EQ(length_of({0xb9, 0x0f, 0x31, 0x90, 0x90}), 5u);         // mov $imm32, %ecx
  EXPECT_EQ(length_of({0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}), 10u);  // movabs $imm64, %rax
  EXPECT_EQ(length_of({0x66, 0xb8, 1, 2}), 4u);                     // mov $imm16, %ax
  EXPECT_EQ(length_of({0x66, 0x81, 0xc0, 1, 2}), 5u);               // add $imm16, %ax
  EXPECT_EQ(length_of({0xf6, 0xc1, 0x01}), 3u);                     // test $1, %cl
  EXPECT_EQ(length_of({0xf6, 0xd1}), 2u);                           // not %cl: no immediate
  EXPECT_EQ(length_of({0xc8, 0x10, 0x00, 0x00}), 4u);               // enter $16, $0
  EXPECT_EQ(length_of({0xa1, 1, 2, 3, 4, 5, 6, 7, 8}), 9u);         // mov moffs64, %eax
  EXPECT_EQ(length_of({0x8b, 0x84, 0x24, 1, 2, 3, 4}), 7u);         // mov disp32(%rsp), %eax
  EXPECT_EQ(length_of({0x8b, 0x05, 1, 2, 3, 4}), 6u);               // mov disp32(%rip), %eax
  EXPECT_EQ(length_of({0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x08}), 6u);   // palignr $8, %xmm1, %xmm0
  EXPECT_EQ(length_of({0xc5, 0xfc, 0x58, 0xc1}), 4u);               // vaddps %ymm1, %ymm0, %ymm0
  EXPECT_EQ(length_of({0xc4, 0xe3, 0x7d, 0x18, 0xc1, 0x01}), 6u);   // vinsertf128 $1
  EXPECT_EQ(length_of({0x62, 0xf1, 0x7c, 0x48, 0x58, 0xc1}), 6u);   // vaddps %zmm1, %zmm0, %zmm0
  EXPECT_EQ(length_of({0xc5, 0xf8, 0x77}), 3u);                     // vzeroupper
  EXPECT_EQ(length_of({0x0f, 0x1f, 0x84, 0x00, 0, 0, 0, 0}), 8u);   // nopl 0(%rax,%rax)
  EXPECT_EQ(length_of({0xe8, 0, 0, 0, 0}), 5u);                     // call rel32
  EXPECT_EQ(length_of({0x06}), 0u);                                 // push %es: invalid in 64-bit mode
  EXPECT_EQ(length_of({0x0f}), 0u);                                 // truncated
  EXPECT_EQ(length_of(std::vector<uint8_t>(15, 0x66)), 0u);         // only prefixes

  auto rdtscp = x86::decode(std::vector<uint8_t>{0x0f, 0x01, 0xf9}.data(), 3);
  ASSERT_TRUE(rdtscp);
  EXPECT_EQ(rdtscp->counter, x86::Insn::Counter::Rdtscp);
  auto xgetbv = x86::decode(std::vector<uint8_t>{0x0f, 0x01, 0xd0}.data(), 3);
  ASSERT_TRUE(xgetbv);
  EXPECT_EQ(xgetbv->counter, x86::Insn::Counter::None);
  auto jmp = x86::decode(std::vector<uint8_t>{0xeb, 0xfe}.data(), 2);
  ASSERT_TRUE(jmp);
  EXPECT_TRUE(jmp->relative_branch);
  EXPECT_EQ(jmp->displacement, -2);
}

// objdump's count of decoded counter instructions in FILE's .text, or -1 without objdump.
long objdump_counter_reads(const std::string& file) {
  const std::string cmd = "objdump -d --no-show-raw-insn -j .text '" + file + "' 2>/dev/null | grep -cwE 'rdtscp?|rdpmc'";
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(cmd.c_str(), "r"), ::pclose);
  if (!p) return -1;
  long n = -1;
  if (std::fscanf(p.get(), "%ld", &n) != 1) return -1;
  return n;
}

size_t raw_rdtsc_bytes(const std::vector<uint8_t>& bytes) {
  size_t n = 0;
  for (size_t i = 0; i + 1 < bytes.size(); ++i) n += bytes[i] == 0x0f && bytes[i + 1] == 0x31;
  return n;
}

TEST(RulesCounter, SystemLibrariesHoldTheBytesButOnlyObjdumpsInstructionsAreFound) {
  if (::system("command -v objdump >/dev/null 2>&1") != 0) GTEST_SKIP() << "objdump (binutils) is not installed";
  for (const char* lib : {"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"}) {
    std::error_code ec;
    if (!std::filesystem::exists(lib, ec)) continue;
    const std::string real = std::filesystem::canonical(lib).string();
    const ArtifactInfo info = read_artifact(real);
    const long objdump = objdump_counter_reads(real);
    ASSERT_GE(objdump, 0) << real;
    // The bytes 0f 31 occur inside other instructions' operands many times; the decoder finds
    // exactly the instructions objdump shows (at most the cap of reported reads).
    EXPECT_GT(raw_rdtsc_bytes(file_bytes(real)), static_cast<size_t>(objdump) + 10) << real;
    EXPECT_EQ(info.counter_reads.size(), std::min<size_t>(static_cast<size_t>(objdump), 16)) << real;
  }
}

class RulesCounterBuilt : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { scratch_ = new Scratch(); }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  static Scratch* scratch_;
};
Scratch* RulesCounterBuilt::scratch_ = nullptr;

TEST_F(RulesCounterBuilt, IntrinsicsAndInlineAsmAreFoundAndNamed) {
  const std::string so = scratch_->shared_object("tsc", R"(
#include <x86intrin.h>
#include <cstdint>
extern "C" uint64_t kg_phase_gap() { static uint64_t last; uint64_t now = __rdtsc(); uint64_t g = now - last; last = now; return g; }
extern "C" uint64_t kg_ordered() { unsigned aux; return __rdtscp(&aux); }
extern "C" uint64_t kg_pmc() { uint32_t lo, hi; asm volatile(".byte 0x0f, 0x33" : "=a"(lo), "=d"(hi) : "c"(0)); return lo | uint64_t(hi) << 32; }
)");
  ASSERT_FALSE(so.empty());
  const ArtifactInfo info = read_artifact(so);
  ASSERT_EQ(info.counter_reads.size(), 3u);
  std::string all;
  for (const auto& r : info.counter_reads) all += r + "\n";
  EXPECT_NE(all.find("rdtsc at 0x"), std::string::npos) << all;
  EXPECT_NE(all.find("(kg_phase_gap+0x"), std::string::npos) << all;
  EXPECT_NE(all.find("rdtscp at 0x"), std::string::npos) << all;
  EXPECT_NE(all.find("rdpmc at 0x"), std::string::npos) << all;
  const std::string evidence = rule_timer_tampering(info);
  EXPECT_NE(evidence.find("reads the time-stamp counter: "), std::string::npos) << evidence;
}

TEST_F(RulesCounterBuilt, AJumpIntoAnImmediateIsDecodedWhereItLands) {
  const std::string so = scratch_->shared_object("hidden", R"(
#include <cstdint>
extern "C" uint64_t kg_hidden() {
  uint32_t lo, hi;
  asm volatile("jmp 1f+1\n1: mov $0x9090310f, %%ecx\n" : "=a"(lo), "=d"(hi) : : "rcx");
  return (uint64_t(hi) << 32) | lo;
}
)");
  ASSERT_FALSE(so.empty());
  if (::system("command -v objdump >/dev/null 2>&1") == 0) {
    EXPECT_EQ(objdump_counter_reads(so), 0) << "a linear disassembly shows only the mov";
  }
  const ArtifactInfo info = read_artifact(so);
  ASSERT_EQ(info.counter_reads.size(), 1u);
  EXPECT_NE(info.counter_reads[0].find("rdtsc at 0x"), std::string::npos) << info.counter_reads[0];
  EXPECT_NE(info.counter_reads[0].find("(kg_hidden+0x"), std::string::npos) << info.counter_reads[0];
}

TEST_F(RulesCounterBuilt, TheSameBytesInsideHonestOperandsAreNotReported) {
  // 0x310f in immediates and displacements, the way honest code carries such constants.
  const std::string so = scratch_->shared_object("honest", R"(
#include <cstdint>
static int table[0x4000];
extern "C" uint32_t kg_constant(uint32_t x) { return x * 0x9090310fu + 0x310fu; }
extern "C" int kg_index(int i) { return table[0x310f] + table[i] + 0x0f31; }
extern "C" uint32_t kg_imm_asm() { uint32_t v; asm volatile("mov $0x9090310f, %0" : "=r"(v)); return v; }
)");
  ASSERT_FALSE(so.empty());
  const std::vector<uint8_t> bytes = file_bytes(so);
  EXPECT_GE(raw_rdtsc_bytes(bytes), 2u) << "the object should hold the bytes 0f 31";
  const ArtifactInfo info = read_artifact(so);
  EXPECT_TRUE(info.counter_reads.empty()) << info.counter_reads.front();
  EXPECT_EQ(rule_timer_tampering(info).find("time-stamp"), std::string::npos);
}

}  // namespace
}  // namespace kg::policy::test

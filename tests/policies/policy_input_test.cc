// PolicyInput: what `load` accepts as a policy file (a regular file of at most kMaxPolicyBytes,
// read from the descriptor it checked) and the range of every numeric key, at its edges and past
// them. Each case makes the real thing: a character device, a FIFO, a directory, a sparse file.
#include "policy_test_util.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <future>

int kg_cmd_policy(int argc, char** argv);

namespace kg::policy {
namespace {

// The PolicyError `load(path)` gives, failing the test when it loads or takes more than 10 s (a
// blocking open of a FIFO is released by opening the other end, so the test itself never hangs).
std::string load_error(const std::string& path) {
  auto done = std::async(std::launch::async, [&]() -> std::string {
    try {
      load(path);
    } catch (const PolicyError& e) { return e.what(); }
    return "";
  });
  if (done.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "load(" << path << ") still blocked after 10 s";
    int w = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
    if (w >= 0) ::close(w);
  }
  std::string msg = done.get();
  EXPECT_FALSE(msg.empty()) << path << " loaded";
  return msg;
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << "missing \"" << (part) << "\" in: " << (text)

TEST(PolicyInput, CharacterDeviceIsRefusedWithoutReadingIt) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string msg = load_error("/dev/zero");
  EXPECT_CONTAINS(msg, "/dev/zero: cannot read policy file: is a character device, not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

TEST(PolicyInput, FifoIsRefusedWithoutWaitingForAWriter) {
  test::TempDir t;
  const std::string fifo = t.path() + "/fifo.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_CONTAINS(load_error(fifo), fifo + ": cannot read policy file: is a FIFO");
}

TEST(PolicyInput, DirectoryIsRefused) {
  test::TempDir t;
  const std::string dir = t.path() + "/dir.toml";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  EXPECT_CONTAINS(load_error(dir), dir + ": cannot read policy file: is a directory");
}

TEST(PolicyInput, SymlinkToADeviceIsJudgedByWhatItResolvesTo) {
  test::TempDir t;
  const std::string link = t.path() + "/zero.toml";
  ASSERT_EQ(::symlink("/dev/zero", link.c_str()), 0);
  EXPECT_CONTAINS(load_error(link), "is a character device");
  // Control: a link to a regular profile loads.
  const std::string real = t.write("real.toml", "[trials]\ncorrectness = 3\n");
  const std::string ok = t.path() + "/ok.toml";
  ASSERT_EQ(::symlink(real.c_str(), ok.c_str()), 0);
  EXPECT_EQ(load(ok).correctness_trials, 3);
}

TEST(PolicyInput, FileOverTheCapIsRefusedFromItsSize) {
  test::TempDir t;
  // Sparse: 1 GiB of apparent size and no data blocks. Refused from fstat, never read.
  const std::string big = t.path() + "/big.toml";
  {
    int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t{1} << 30), 0);
    ::close(fd);
  }
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_CONTAINS(load_error(big), big + ": cannot read policy file: is 1073741824 bytes, over the limit of 1048576 bytes");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  // One byte over the cap is refused; exactly the cap loads.
  std::string text = "[trials]\ncorrectness = 2\n";
  text.append(kMaxPolicyBytes - text.size() - 1, '#');
  text += "\n";
  ASSERT_EQ(text.size(), kMaxPolicyBytes);
  EXPECT_EQ(load(t.write("at-cap.toml", text)).correctness_trials, 2);
  EXPECT_CONTAINS(load_error(t.write("over-cap.toml", text + "\n")), "over the limit of 1048576 bytes");
}

TEST(PolicyInput, PolicyShowOfADeviceOrFifoExits2) {
  test::TempDir t;
  const std::string fifo = t.path() + "/p.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), fifo, t.path()}) {
    std::vector<std::string> args = {"policy", "show", path};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    auto rc = std::async(std::launch::async, [&] { return kg_cmd_policy(3, argv.data()); });
    if (rc.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      ADD_FAILURE() << "policy show " << path << " still blocked after 10 s";
      int w = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
      if (w >= 0) ::close(w);
    }
    const int status = rc.get();
    const std::string out = testing::internal::GetCapturedStdout(), err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(status, 2) << path;
    EXPECT_TRUE(out.empty()) << out;
    EXPECT_CONTAINS(err, path + ": cannot read policy file: is ");
  }
}

// Every numeric key past each end of its range, and non-finite: file:line:col and the key.
struct Key {
  const char* table;
  const char* key;
  const char* range;  // as the message states it
};
const Key kRangedKeys[] = {
    {"limits", "compile_time_s", "(0 < x <= 3600)"},         {"limits", "run_call_time_s", "(0 < x <= 3600)"},
    {"limits", "compile_memory_mb", "(1 <= x <= 16777216)"}, {"limits", "run_memory_mb", "(1 <= x <= 16777216)"},
    {"timing", "min_seconds", "(0 <= x <= 3600)"},           {"tolerance.f32", "atol", "(0 <= x <= 1e+09)"},
    {"tolerance.bf16", "rtol", "(0 <= x <= 1e+09)"},         {"op.\"mm.default\".f32", "atol", "(0 <= x <= 1e+09)"},
};

TEST(PolicyInput, EveryNumericKeyOutOfRangeNamesFileLineAndKey) {
  for (const Key& k : kRangedKeys) {
    const std::string full = std::string(k.table) + "." + k.key;
    for (const char* bad : {"1e300", "1e10", "-1", "nan", "inf", "-inf"}) {
      const std::string text = "name = \"x\"\n[" + std::string(k.table) + "]\n" + k.key + " = " + bad + "\n";
      const std::string col = std::to_string(std::string(k.key).size() + 4);
      const std::string msg = test::error_of(text);
      EXPECT_CONTAINS(msg, "bad.toml:3:" + col + ": key '" + full + "': ");
      EXPECT_CONTAINS(msg, std::string(" is out of range ") + k.range);
    }
  }
  // The values of the report that made a correct kernel fail with a time-limit message.
  EXPECT_CONTAINS(test::error_of("[limits]\nrun_call_time_s = 1e9\n"),
                  "bad.toml:2:19: key 'limits.run_call_time_s': 1e+09 is out of range (0 < x <= 3600)");
  EXPECT_CONTAINS(test::error_of("[limits]\ncompile_time_s = 1e300\n"),
                  "bad.toml:2:18: key 'limits.compile_time_s': 1e+300 is out of range (0 < x <= 3600)");
  EXPECT_CONTAINS(test::error_of("[limits]\nrun_memory_mb = nan\n"), "nan is out of range (1 <= x <= 16777216): must be a finite number");
  // A fraction of a MiB would truncate to "no limit".
  EXPECT_CONTAINS(test::error_of("[limits]\nrun_memory_mb = 0.5\n"), "key 'limits.run_memory_mb': 0.5 is out of range");
  // Integer keys keep their ranges.
  EXPECT_CONTAINS(test::error_of("[timing]\nwarmup = -1\n"), "bad.toml:2:10: key 'timing.warmup': must be between 0 and");
  EXPECT_CONTAINS(test::error_of("[timing]\nmax_reps = 1e300\n"), "key 'timing.max_reps': expected an integer, got a float");
  EXPECT_CONTAINS(test::error_of("[timing]\nrotation_mib = 1048577\n"), "key 'timing.rotation_mib': must be between 0 and 1048576");
}

TEST(PolicyInput, EdgeValuesInsideTheRangesLoad) {
  Policy p = parse(
      "[limits]\ncompile_time_s = 3600\nrun_call_time_s = 1e-3\ncompile_memory_mb = 16777216\nrun_memory_mb = 1\n"
      "[timing]\nmin_seconds = 3600\nwarmup = 1000000\nmin_reps = 10000000\nmax_reps = 10000000\nrotation_mib = 1048576\n"
      "[tolerance.f32]\natol = 1e9\nrtol = 0\n[trials]\ncorrectness = 1000\n",
      "edges.toml");
  EXPECT_EQ(p.compile_time_s, 3600);
  EXPECT_EQ(p.run_call_time_s, 1e-3);
  EXPECT_EQ(p.compile_memory_mb, 16777216);
  EXPECT_EQ(p.run_memory_mb, 1);
  EXPECT_EQ(p.timing_min_seconds, 3600);
  EXPECT_EQ(p.timing_rotation_mib, 1 << 20);
  EXPECT_EQ(p.tolerances["f32"].atol, 1e9);
  EXPECT_EQ(p.correctness_trials, 1000);
  // The largest memory limit in bytes, as the sandbox computes it, stays inside 64 bits.
  EXPECT_EQ(static_cast<uint64_t>(p.compile_memory_mb) << 20, uint64_t{1} << 44);
  // Its effective settings print and parse back to the same policy.
  EXPECT_TRUE(parse(p.to_toml(), "edges.toml") == p);
}

TEST(PolicyInput, EveryShippedProfileStillLoads) {
  test::PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  ASSERT_FALSE(profile_names().empty());
  for (const auto& n : profile_names()) EXPECT_NO_THROW(load(n)) << n;
}

}  // namespace
}  // namespace kg::policy

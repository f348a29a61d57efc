// RunnerDeath*: a runner killed with SIGKILL from outside (as an operator, the OOM killer of the
// host or a stray `kill` would) is reported with the signal and the phase it was in, whether it
// died inside a call, inside the timed calls, or while idle between calls.
#include "loader_test_util.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;
using namespace kg::loader;
using namespace kg::loader::test;

namespace {

// mode 6 sleeps long enough to be killed in the middle of the call.
const char* kSleeper = R"(#include <ATen/ATen.h>
#include <chrono>
#include <thread>
at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  float mode = self.numel() ? self.contiguous().data_ptr<float>()[0] : 0;
  if (mode == 6) std::this_thread::sleep_for(std::chrono::seconds(5));
  return self.clamp_min(0);
}
)";

struct Fixture : BuiltRelu {
  Fixture() : BuiltRelu(kSleeper) {}
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

std::unique_ptr<RunnerClient> start_loaded() {
  RunnerOptions o;
  o.runner_path = default_runner_path();
  o.ro_binds = {fs::path(fixture().built.artifact).parent_path().string()};
  o.limits.cpu_s = 20;
  o.limits.wall_s = 30;
  o.limits.memory_mb = 1024;
  auto r = RunnerClient::start(o);
  EXPECT_EQ(load_message(r->load(load_request(fixture().op, fixture().built, Device::Cpu))), "");
  return r;
}

std::vector<c10::IValue> input(float mode) {
  at::Tensor t = at::randn({64});
  t[0] = mode;
  return {t};
}

std::string status_field(pid_t pid, const std::string& key) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.compare(0, key.size() + 1, key + ":") == 0) {
      std::istringstream in(line.substr(key.size() + 1));
      std::string v;
      in >> v;
      return v;
    }
  return "";
}

// The host pid of this process's kg-runner: the runner binary, child of a box init whose parent is us.
pid_t find_runner() {
  std::error_code ec;
  const fs::path runner = fs::canonical(default_runner_path(), ec);
  for (int attempt = 0; attempt < 500; ++attempt) {
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
      const std::string name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::error_code ec2;
      if (fs::read_symlink(e.path() / "exe", ec2) != runner) continue;
      const pid_t pid = std::atoi(name.c_str());
      const std::string init = status_field(pid, "PPid");
      if (!init.empty() && status_field(std::atoi(init.c_str()), "PPid") == std::to_string(::getpid())) return pid;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

// SIGKILL for the runner `delay` from now, from another thread (the caller is blocked in a call).
std::thread kill_runner_after(pid_t pid, std::chrono::milliseconds delay) {
  return std::thread([pid, delay] {
    std::this_thread::sleep_for(delay);
    ::kill(pid, SIGKILL);
  });
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(RunnerDeath, KilledFromOutsideDuringACallNamesTheSignalAndThePhase) {
  ASSERT_TRUE(fixture().built.ok) << all_diagnostics(fixture().built);
  auto r = start_loaded();
  const pid_t pid = find_runner();
  ASSERT_GT(pid, 0) << "no kg-runner of this process found";
  std::thread killer = kill_runner_after(pid, std::chrono::milliseconds(500));
  CallOutcome out = r->call(input(6), 1, 20);
  killer.join();
  std::printf("message: %s\n", out.message.c_str());
  EXPECT_EQ(out.kind, CallOutcome::Kind::Died);
  EXPECT_EQ(out.record.status, kg::sandbox::Status::SG) << out.record.to_json();
  EXPECT_EQ(out.record.signal, SIGKILL);
  EXPECT_TRUE(has(out.message, "the runner was killed by SIGKILL during the call")) << out.message;
  EXPECT_FALSE(r->alive());
}

TEST(RunnerDeath, KilledFromOutsideDuringTheTimedCallsNamesTheSignalAndThePhase) {
  ASSERT_TRUE(fixture().built.ok) << all_diagnostics(fixture().built);
  auto r = start_loaded();
  const pid_t pid = find_runner();
  ASSERT_GT(pid, 0);
  std::thread killer = kill_runner_after(pid, std::chrono::milliseconds(500));
  CallOptions o;
  o.warmup = 1;
  o.reps = 3;
  CallOutcome out = r->call(input(6), 1, 60, o);
  killer.join();
  std::printf("message: %s\n", out.message.c_str());
  EXPECT_EQ(out.kind, CallOutcome::Kind::Died);
  EXPECT_TRUE(out.times_s.empty());
  EXPECT_TRUE(has(out.message, "the runner was killed by SIGKILL during the timed calls")) << out.message;
}

TEST(RunnerDeath, KilledWhileIdleTheNextCallNamesTheSignalNotABrokenPipe) {
  ASSERT_TRUE(fixture().built.ok) << all_diagnostics(fixture().built);
  auto r = start_loaded();
  ASSERT_EQ(r->call(input(0), 1, 10).kind, CallOutcome::Kind::Ok);
  const pid_t pid = find_runner();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  for (int i = 0; i < 500 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CallOutcome out = r->call(input(0), 1, 10);
  std::printf("message: %s\n", out.message.c_str());
  EXPECT_EQ(out.kind, CallOutcome::Kind::Died);
  EXPECT_TRUE(has(out.message, "the runner was killed by SIGKILL during the call")) << out.message;
  // And every later call on it says so too.
  CallOutcome later = r->call(input(0), 1, 10);
  EXPECT_TRUE(has(later.message, "runner is not running: it was killed by SIGKILL earlier")) << later.message;
}

TEST(RunnerDeath, ControlAnUndisturbedRunnerTimesItsCalls) {
  ASSERT_TRUE(fixture().built.ok) << all_diagnostics(fixture().built);
  auto r = start_loaded();
  CallOptions o;
  o.warmup = 1;
  o.reps = 3;
  CallOutcome out = r->call(input(0), 1, 30, o);
  ASSERT_EQ(out.kind, CallOutcome::Kind::Ok) << out.message;
  EXPECT_EQ(out.times_s.size(), 3u);
  EXPECT_EQ(r->finish().status, kg::sandbox::Status::OK);
}

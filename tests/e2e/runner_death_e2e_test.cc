// A runner killed with SIGKILL from outside while `kernelgate eval` times an op: results.json says
// what happened. The eager reference's runner: the op keeps its verdict, has no speedup and
// `timing_skipped` names the signal. The kernel's runner: a crash failure naming the signal and the
// timed calls. Control: the same evaluation undisturbed is timed.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../runner_processes.h"
#include "e2e_util.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kg::e2e;

namespace {

// The correct relu of the bundled examples, as a one-op submission.
fs::path relu_submission(const std::string& name) {
  fs::path sub = temp_dir("death-" + name);
  const std::string folder = "relu__default";
  fs::create_directories(sub / folder);
  fs::copy_file(fs::path(KG_SOURCE_DIR) / "examples/correct" / folder / (folder + "_implementation.cpp"),
                sub / folder / (folder + "_implementation.cpp"));
  return sub;
}

pid_t start_eval(const fs::path& sub, const fs::path& out) {
  const std::string log = (out / "kernelgate.log").string();
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    // Runners started when needed: the second runner to appear is then eager's, started for the
    // timing (a pool would start it ahead, while the kernel's runner is still judging).
    ::execl(KG_BINARY, KG_BINARY, "eval", sub.c_str(), "--seed", "5", "--out", out.c_str(), "--no-runner-pool", nullptr);
    ::_exit(127);
  }
  return pid;
}

// Waits for the eager reference's runner: a second runner appearing while the kernel's first one
// still runs (a correct kernel's runner is never replaced). Returns {kernel's, eager} or {-1, -1}.
std::pair<pid_t, pid_t> wait_for_eager(pid_t supervisor) {
  pid_t kernel = -1;
  for (int i = 0; i < 120000; ++i) {
    std::vector<pid_t> now = kg::test::runners_of(supervisor);
    if (kernel < 0 && now.size() == 1) kernel = now.front();
    if (kernel > 0)
      for (pid_t p : now)
        if (p != kernel) return {kernel, p};
    int st;
    if (::waitpid(supervisor, &st, WNOHANG) == supervisor) return {-1, -1};
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return {-1, -1};
}

json finish(pid_t supervisor, const fs::path& out, int* status) {
  int st = 0;
  ::waitpid(supervisor, &st, 0);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream f(out / "results.json");
  EXPECT_TRUE(f.good()) << "no results.json; log:\n" << read(out / "kernelgate.log");
  return f.good() ? json::parse(f) : json();
}

}  // namespace

TEST(E2ERunnerDeath, EagerRunnerKilledDuringTimingKeepsTheVerdictAndSaysWhyThereIsNoSpeedup) {
  const fs::path sub = relu_submission("eager"), out = temp_dir("death-eager-out");
  const pid_t kg = start_eval(sub, out);
  auto [kernel, eager] = wait_for_eager(kg);
  ASSERT_GT(eager, 0) << "no eager runner seen; log:\n" << read(out / "kernelgate.log");
  ASSERT_EQ(::kill(eager, SIGKILL), 0);
  int status = 0;
  json res = finish(kg, out, &status);
  ASSERT_TRUE(res.is_object());
  const json& op = res["ops"][0];
  std::printf("timing_skipped: %s\n", op.value("timing_skipped", std::string("(absent)")).c_str());
  EXPECT_EQ(op["verdict"], "pass") << op.dump(2);
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(op["speedup"].is_null()) << op.dump(2);
  ASSERT_TRUE(op.contains("timing_skipped")) << op.dump(2);
  const std::string why = op["timing_skipped"];
  EXPECT_NE(why.find("eager reference's runner"), std::string::npos) << why;
  EXPECT_NE(why.find("killed by SIGKILL"), std::string::npos) << why;
}

TEST(E2ERunnerDeath, KernelsRunnerKilledDuringTimingIsACrashNamingTheSignalAndThePhase) {
  const fs::path sub = relu_submission("kernel"), out = temp_dir("death-kernel-out");
  const pid_t kg = start_eval(sub, out);
  auto [kernel, eager] = wait_for_eager(kg);
  ASSERT_GT(kernel, 0) << "no runners seen; log:\n" << read(out / "kernelgate.log");
  ASSERT_EQ(::kill(kernel, SIGKILL), 0);
  int status = 0;
  json res = finish(kg, out, &status);
  ASSERT_TRUE(res.is_object());
  const json& op = res["ops"][0];
  EXPECT_EQ(op["verdict"], "fail") << op.dump(2);
  EXPECT_EQ(status, 1);
  ASSERT_FALSE(op["failures"].empty()) << op.dump(2);
  const json& f = op["failures"][0];
  const std::string message = f["evidence"].value("message", std::string());
  std::printf("failure: %s: %s\n", f["category"].get<std::string>().c_str(), message.c_str());
  EXPECT_EQ(f["category"], "crash");
  EXPECT_NE(message.find("the runner was killed by SIGKILL during the timed calls"), std::string::npos) << f.dump(2);
}

TEST(E2ERunnerDeath, ControlAnUndisturbedEvaluationIsTimed) {
  const fs::path sub = relu_submission("control"), out = temp_dir("death-control-out");
  const pid_t kg = start_eval(sub, out);
  int status = 0;
  json res = finish(kg, out, &status);
  ASSERT_TRUE(res.is_object());
  const json& op = res["ops"][0];
  EXPECT_EQ(op["verdict"], "pass") << op.dump(2);
  EXPECT_TRUE(op["speedup"].is_number()) << op.dump(2);
  EXPECT_FALSE(op["timing"].empty());
  EXPECT_FALSE(op.contains("timing_skipped")) << op.dump(2);
  // Where the timing went: each exchange's wall clock holds its calls, and the parts fit in the
  // timing phase.
  const json& parts = op["timing_seconds"];
  ASSERT_TRUE(parts.is_object()) << op.dump(2);
  for (const char* part : {"probe", "candidate", "candidate_calls", "judge", "eager", "eager_calls"})
    EXPECT_GT(parts.value(part, 0.0), 0.0) << part << ": " << parts.dump();
  EXPECT_GE(parts.value("draws", -1.0), 0.0) << parts.dump();
  EXPECT_LT(parts.value("candidate_calls", 0.0), parts.value("candidate", 0.0)) << parts.dump();
  EXPECT_LT(parts.value("eager_calls", 0.0), parts.value("eager", 0.0)) << parts.dump();
  double sum = 0;
  for (const auto& [part, s] : parts.items())
    if (part.find("_calls") == std::string::npos) sum += s.get<double>();
  EXPECT_LE(sum, op["phase_seconds"].value("timing", 0.0)) << parts.dump() << op["phase_seconds"].dump();
  // And where the judging went: every sample judged, each trial of the competition profile run.
  const json& judging = op["judging_seconds"];
  ASSERT_TRUE(judging.is_object()) << op.dump(2);
  double judged = 0;
  for (const char* part : {"samples", "repeat", "fresh", "same_address", "enlarged"}) {
    EXPECT_GT(judging.value(part, 0.0), 0.0) << part << ": " << judging.dump();
    judged += judging.value(part, 0.0);
  }
  EXPECT_LE(judged, op["phase_seconds"].value("judging", 0.0)) << judging.dump() << op["phase_seconds"].dump();
  // The ladder's top rung, where it was climbed (its gate is decided by timing, so a loaded
  // machine may skip it): its parts fit in the enlarged trial, the reply's wait in the call.
  if (op.contains("rung_seconds")) {
    const json& rung = op["rung_seconds"];
    for (const char* part : {"reference", "call", "awaited"}) EXPECT_GT(rung.value(part, 0.0), 0.0) << part << ": " << rung.dump();
    EXPECT_LE(rung.value("awaited", 0.0), rung.value("call", 0.0)) << rung.dump();
    EXPECT_LE(rung.value("draw", 0.0) + rung.value("reference", 0.0) + rung.value("call", 0.0), judging.value("enlarged", 0.0))
        << rung.dump() << judging.dump();
  }
}

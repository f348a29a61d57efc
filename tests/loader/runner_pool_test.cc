// RunnerPool*: runners started ahead of their work. Every take is a new runner that loads only what
// is staged into its own read-only folder; a runner that waited longer than its wall limit still
// serves; no runner starts while a Quiet lives, nor beyond max_ahead. The isolation test attacks
// for real: a kernel in one pooled runner tries to read another runner's staged artifact and the
// build cache, beside the honest control of reading its own.
#include "loader_test_util.h"

#include "../runner_processes.h"
#include "kernelgate/runner_pool.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <set>
#include <thread>

namespace fs = std::filesystem;
using namespace kg::loader;
using namespace kg::loader::test;

namespace {

// Element 0 == 7: the elements after it are the bytes of a path (0 ends it). Every output element
// is relu(x) + 1 when that file opens for reading, + 0 when it does not.
const char* kPeeker = R"(#include <ATen/ATen.h>
#include <cstdio>
#include <string>
at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  at::Tensor x = self.contiguous();
  const float* p = x.data_ptr<float>();
  float seen = 0;
  if (x.numel() > 1 && p[0] == 7) {
    std::string path;
    for (int64_t i = 1; i < x.numel() && p[i] != 0; ++i) path += static_cast<char>(p[i]);
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      seen = 1;
      std::fclose(f);
    }
  }
  return self.clamp_min(0) + seen;
}
)";

struct Peeker : BuiltRelu {
  Peeker() : BuiltRelu(kPeeker) {}
};

Peeker& peeker() {
  static Peeker p;
  return p;
}

RunnerPool::Options pool_options(const std::string& root, size_t ready, double wall_s = 30) {
  RunnerPool::Options o;
  o.runner.runner_path = default_runner_path();
  o.runner.limits.cpu_s = 20;
  o.runner.limits.wall_s = wall_s;
  o.runner.limits.memory_mb = 1024;
  o.runner.staging_root = root;
  o.ready = ready;
  return o;
}

// Waits (at most 60 s) until `done` holds for the pool's stats.
template <typename Pred>
bool wait_for_stats(const RunnerPool& pool, Pred done) {
  for (int i = 0; i < 600; ++i) {
    if (done(pool.stats())) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// Loads `kernel`'s artifact staged into `r`'s own folder; the staged path.
std::string stage_and_load(RunnerClient& r, const BuiltRelu& kernel = peeker()) {
  const std::string staged = r.stage(kernel.built.artifact);
  LoadRequest req = load_request(kernel.op, kernel.built, Device::Cpu);
  req.artifact = staged;
  EXPECT_EQ(load_message(r.load(req)), "");
  return staged;
}

// 1 when the kernel in `r` could open `path` for reading, 0 when not; -1: the call failed.
float peek(RunnerClient& r, const std::string& path, CallOutcome* outcome = nullptr) {
  at::Tensor t = at::zeros({static_cast<int64_t>(path.size()) + 8});
  t[0] = 7;
  for (size_t i = 0; i < path.size(); ++i) t[static_cast<int64_t>(i) + 1] = static_cast<float>(static_cast<unsigned char>(path[i]));
  CallOutcome out = r.call({t}, 1, 10);
  if (outcome) *outcome = out;
  if (out.kind != CallOutcome::Kind::Ok || out.returns.empty()) return -1;
  return out.returns[0].toTensor()[-1].item<float>();  // relu(0) + seen
}

bool refused(const CallOutcome& out, const std::string& path) {
  for (const auto& o : out.refused_opens)
    if (o.path == path) return true;
  return false;
}

}  // namespace

TEST(RunnerPool, EveryTakeIsANewRunnerLoadingFromItsOwnFolder) {
  ASSERT_TRUE(peeker().built.ok) << all_diagnostics(peeker().built);
  TempDir root;
  RunnerPool pool(pool_options(root.path, 1));
  std::set<pid_t> pids;
  std::set<std::string> staged;
  std::vector<std::unique_ptr<RunnerClient>> taken;
  for (int i = 0; i < 3; ++i) {
    taken.push_back(pool.take());
    RunnerClient& r = *taken.back();
    pids.insert(r.pid());
    const std::string path = stage_and_load(r);
    staged.insert(path);
    EXPECT_EQ(fs::path(path).parent_path().parent_path(), fs::path(root.path)) << path;
    EXPECT_EQ(peek(r, "/nonexistent"), 0);  // the loaded relu answers
  }
  EXPECT_EQ(pids.size(), 3u);
  EXPECT_EQ(staged.size(), 3u);
  const RunnerPool::Stats s = pool.stats();
  EXPECT_EQ(s.taken_ready + s.taken_cold, 3u);
  // A runner's folder goes with it.
  const std::string first = *staged.begin();
  taken.clear();
  EXPECT_FALSE(fs::exists(fs::path(first).parent_path())) << first;
}

TEST(RunnerPool, ARunnerSeesNeitherAnotherRunnersArtifactNorTheCache) {
  ASSERT_TRUE(peeker().built.ok) << all_diagnostics(peeker().built);
  TempDir root;
  RunnerPool pool(pool_options(root.path, 2));
  auto a = pool.take();
  auto b = pool.take();
  const std::string mine = stage_and_load(*a);
  const std::string theirs = b->stage(peeker().built.artifact);
  ASSERT_TRUE(fs::exists(theirs));
  // The honest control: the kernel reads its own artifact.
  EXPECT_EQ(peek(*a, mine), 1);
  // The attack: another runner's staged artifact, and the build cache the artifact came from.
  CallOutcome out;
  EXPECT_EQ(peek(*a, theirs, &out), 0);
  EXPECT_TRUE(refused(out, theirs)) << "the attempt is named";
  EXPECT_EQ(peek(*a, peeker().built.artifact, &out), 0);
  EXPECT_TRUE(refused(out, peeker().built.artifact));
}

TEST(RunnerPool, AReadyRunnerOutlivesItsWallLimitWhileItWaits) {
  ASSERT_TRUE(peeker().built.ok) << all_diagnostics(peeker().built);
  TempDir root;
  RunnerPool pool(pool_options(root.path, 1, 2.0));
  ASSERT_TRUE(wait_for_stats(pool, [](const RunnerPool::Stats& s) { return s.ready_now == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));  // longer than the 2 s wall limit
  auto r = pool.take();
  EXPECT_EQ(pool.stats().taken_ready, 1u);
  EXPECT_FALSE(r->exited());
  stage_and_load(*r);
  EXPECT_EQ(peek(*r, "/nonexistent"), 0);
}

namespace {

// Waits for `pool`'s one ready runner, kills it from outside and waits until it is gone.
void kill_the_ready_runner(RunnerPool& pool) {
  ASSERT_TRUE(wait_for_stats(pool, [](const RunnerPool::Stats& s) { return s.ready_now == 1; }));
  const std::vector<pid_t> waiting = kg::test::runners_of(::getpid());
  ASSERT_EQ(waiting.size(), 1u);
  ASSERT_EQ(::kill(waiting.front(), SIGKILL), 0);
  for (int i = 0; i < 100 && fs::exists("/proc/" + std::to_string(waiting.front())); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the box's supervision sees it end
}

}  // namespace

// A ready runner that died while it waited (killed from outside) is never handed over: the next
// take gets a live one, which serves.
TEST(RunnerPool, ARunnerThatDiedWaitingIsNeverHandedOver) {
  ASSERT_TRUE(peeker().built.ok) << all_diagnostics(peeker().built);
  TempDir root;
  RunnerPool::Options o = pool_options(root.path, 1);
  o.max_ahead = 1;
  RunnerPool pool(o);
  ASSERT_NO_FATAL_FAILURE(kill_the_ready_runner(pool));
  auto r = pool.take();
  EXPECT_EQ(pool.stats().discarded, 1u);
  EXPECT_EQ(pool.stats().taken_cold, 1u);
  EXPECT_NE(r->pid(), -1);
  stage_and_load(*r);
  EXPECT_EQ(peek(*r, "/nonexistent"), 0);
}

// A runner take() had to start itself counts against max_ahead as one started ahead would: a pool
// told "two in all" that handed over one started on demand starts one more at most, never a
// runner nobody takes (which a one-op evaluation then waited for at its end).
TEST(RunnerPool, ARunnerStartedOnDemandCountsAgainstMaxAhead) {
  TempDir root;
  RunnerPool::Options o = pool_options(root.path, 1);
  o.max_ahead = 2;
  RunnerPool pool(o);
  ASSERT_NO_FATAL_FAILURE(kill_the_ready_runner(pool));
  auto r = pool.take();  // the dead one is dropped; this one is started on demand
  EXPECT_EQ(pool.stats().taken_cold, 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(pool.stats().started_ahead, 1u);  // one ahead + one on demand = max_ahead: none more
  EXPECT_EQ(pool.stats().ready_now, 0u);
  EXPECT_EQ(kg::test::runners_of(::getpid()).size(), 1u);  // only the one handed over
}

TEST(RunnerPool, NoRunnerStartsWhileQuietNorBeyondMaxAhead) {
  TempDir root;
  RunnerPool::Options o = pool_options(root.path, 1);
  o.max_ahead = 2;
  RunnerPool pool(o);
  ASSERT_TRUE(wait_for_stats(pool, [](const RunnerPool::Stats& s) { return s.ready_now == 1; }));
  {
    RunnerPool::Quiet quiet(&pool);
    auto r = pool.take();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(pool.stats().started_ahead, 1u);
    EXPECT_EQ(pool.stats().ready_now, 0u);
  }
  ASSERT_TRUE(wait_for_stats(pool, [](const RunnerPool::Stats& s) { return s.ready_now == 1; }));
  EXPECT_EQ(pool.stats().started_ahead, 2u);
  auto r = pool.take();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(pool.stats().started_ahead, 2u);  // max_ahead reached
  auto cold = pool.take();                    // still served, started on demand
  EXPECT_FALSE(cold->exited());
  EXPECT_EQ(pool.stats().taken_cold, 1u);
}

// A pool started before its owner knew its work (a daemon's worker) is bounded once it does: an
// owner that needs one runner more than was started gets it ahead, and then none beyond; a bound
// lower than what was started stops the starts there.
TEST(RunnerPool, BoundAheadLaterStopsTheStartsAtWhatTheOwnerNeeds) {
  TempDir root;
  RunnerPool::Options o = pool_options(root.path, 1);
  RunnerPool pool(o);  // no bound yet: one kept ready for as long as it lives
  ASSERT_TRUE(wait_for_stats(pool, [](const RunnerPool::Stats& s) { return s.ready_now == 1; }));
  pool.bound_ahead(2);
  auto first = pool.take();
  ASSERT_TRUE(wait_for_stats(pool, [](const RunnerPool::Stats& s) { return s.ready_now == 1; }));
  auto second = pool.take();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(pool.stats().started_ahead, 2u);  // the bound: nothing started for nobody
  EXPECT_EQ(pool.stats().ready_now, 0u);
  pool.bound_ahead(1);  // below what was started: stays at two, and none more
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(pool.stats().started_ahead, 2u);
  EXPECT_EQ(kg::test::runners_of(::getpid()).size(), 2u);
}

// On cuda a Quiet (an op timing) holds nothing back: a runner's start and its device set-up run
// beside timed calls (measured not to move them, docs/batches.md). Here, with no GPU, the set-up
// is attempted inside the Quiet and fails, so the runner is discarded; on the CPU the same pool
// starts nothing until the Quiet ends.
TEST(RunnerPool, OnCudaAQuietHoldsBackNeitherStartNorDeviceSetUp) {
  if (at::hasCUDA()) GTEST_SKIP() << "a GPU is present: the set-up succeeds (the GPU batch benchmark covers it)";
  TempDir cuda_root, cpu_root;
  RunnerPool::Options c = pool_options(cuda_root.path, 1);
  c.device = Device::Cuda;
  RunnerPool::Options h = pool_options(cpu_root.path, 1);
  {
    auto cuda = std::make_unique<RunnerPool>(c);
    RunnerPool::Quiet quiet_cuda(cuda.get());
    EXPECT_TRUE(wait_for_stats(*cuda, [](const RunnerPool::Stats& s) { return s.started_ahead >= 1 && s.discarded >= 1; }))
        << "started " << cuda->stats().started_ahead << ", discarded " << cuda->stats().discarded;
  }
  RunnerPool cpu(h);
  ASSERT_TRUE(wait_for_stats(cpu, [](const RunnerPool::Stats& s) { return s.ready_now == 1; }));
  RunnerPool::Quiet quiet_cpu(&cpu);
  auto r = cpu.take();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(cpu.stats().started_ahead, 1u);  // the next one waits for the Quiet's end
}

// A kernel that leaves text in stdout's buffer (no newline, no flush) on every call.
const char* kTalker = R"(#include <ATen/ATen.h>
#include <cstdio>
at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  std::printf("talker-was-here;");
  return self.clamp_min(0);
}
)";

// A runner's record is taken at its answer to Shutdown, with what the kernel left in its buffers;
// retired to the pool, it has ended (box reaped, folder removed) once a Quiet is made.
TEST(RunnerPool, ARetiredRunnersRecordCameWithItsAnswerAndItHasEndedWhenAQuietIsMade) {
  BuiltRelu talker(kTalker);
  ASSERT_TRUE(talker.built.ok) << all_diagnostics(talker.built);
  TempDir root;
  RunnerPool pool(pool_options(root.path, 0));
  std::unique_ptr<RunnerClient> r = pool.take();
  const std::string staged = stage_and_load(*r, talker);
  const CallOutcome out = r->call({at::randn({8})}, 1, 10);
  ASSERT_EQ(out.kind, CallOutcome::Kind::Ok) << out.message;
  const pid_t box = r->pid();
  const kg::sandbox::Record rec = r->finish_answered();
  EXPECT_EQ(rec.status, kg::sandbox::Status::OK) << rec.to_json();
  EXPECT_EQ(rec.stdout_text, "talker-was-here;") << rec.to_json();
  EXPECT_FALSE(r->alive());
  pool.retire(std::move(r));
  {
    RunnerPool::Quiet quiet(&pool);
    EXPECT_FALSE(fs::exists(fs::path(staged).parent_path())) << staged;
    EXPECT_NE(::kill(box, 0), 0) << "the box's init " << box << " is still there";
  }
  // The same kernel's record after a whole end (finish): the same text, and how it exited.
  std::unique_ptr<RunnerClient> whole = pool.take();
  stage_and_load(*whole, talker);
  ASSERT_EQ(whole->call({at::randn({8})}, 1, 10).kind, CallOutcome::Kind::Ok);
  const kg::sandbox::Record full = whole->finish();
  EXPECT_EQ(full.status, kg::sandbox::Status::OK) << full.to_json();
  EXPECT_EQ(full.exit_code, 0) << full.to_json();
  EXPECT_EQ(full.stdout_text, "talker-was-here;") << full.to_json();
}

// A kernel whose text reaches stdout only 0.4 s into each write of its stream: a C stream over a
// cookie whose writer pauses first, fully buffered, written to without a flush.
const char* kSlowTalker = R"(#include <ATen/ATen.h>
#include <cstdio>
#include <ctime>
#include <unistd.h>
namespace {
ssize_t write_late(void*, const char* buf, size_t n) {
  timespec pause{0, 400000000};
  ::nanosleep(&pause, nullptr);
  return ::write(1, buf, n);
}
FILE* late_stream() {
  static FILE* stream = [] {
    FILE* s = ::fopencookie(nullptr, "w", cookie_io_functions_t{nullptr, write_late, nullptr, nullptr});
    std::setvbuf(s, nullptr, _IOFBF, 4096);
    return s;
  }();
  return stream;
}
}  // namespace
at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  std::fputs("slow-talker-was-here;", late_stream());
  return self.clamp_min(0);
}
)";

// The runner writes the streams' buffers before it answers Shutdown, not only on its way out: were
// the write left to the exit, the answered record would be taken 0.4 s before the text arrives.
TEST(RunnerPool, TheRunnerWritesItsBuffersBeforeItAnswersShutdown) {
  BuiltRelu talker(kSlowTalker);
  ASSERT_TRUE(talker.built.ok) << all_diagnostics(talker.built);
  TempDir root;
  RunnerPool pool(pool_options(root.path, 0));
  std::unique_ptr<RunnerClient> r = pool.take();
  stage_and_load(*r, talker);
  ASSERT_EQ(r->call({at::randn({8})}, 1, 10).kind, CallOutcome::Kind::Ok);
  const kg::sandbox::Record rec = r->finish_answered();
  EXPECT_EQ(rec.status, kg::sandbox::Status::OK) << rec.to_json();
  EXPECT_EQ(rec.stdout_text, "slow-talker-was-here;") << rec.to_json();
  pool.retire(std::move(r));
}

TEST(RunnerPool, NeedsAStagingRootAndServesOnlyItsOwnOptions) {
  RunnerPool::Options o = pool_options("", 0);
  EXPECT_THROW(RunnerPool{o}, std::invalid_argument);
  TempDir root;
  RunnerPool pool(pool_options(root.path, 0));
  RunnerOptions same = pool_options(root.path, 0).runner;
  same.staging_root.clear();
  same.ro_binds = {"/somewhere"};
  EXPECT_TRUE(pool.serves(same));
  RunnerOptions other = same;
  other.limits.memory_mb = 2048;
  EXPECT_FALSE(pool.serves(other));
  other = same;
  other.profile = kg::sandbox::Profile::RunCuda;
  EXPECT_FALSE(pool.serves(other));
}

// Prepare sets the device up ahead of a load, any number of times before it; after a load the
// filter is tight and the runner refuses it, and the loaded op still answers.
TEST(RunnerPrepare, AheadOfALoadOnlyAndTheRunnerLivesOn) {
  ASSERT_TRUE(peeker().built.ok) << all_diagnostics(peeker().built);
  RunnerOptions o = pool_options("", 0).runner;
  o.ro_binds = {fs::path(peeker().built.artifact).parent_path().string()};
  auto r = RunnerClient::start(o);
  EXPECT_EQ(load_message(r->prepare(Device::Cpu)), "");
  EXPECT_EQ(load_message(r->prepare(Device::Cpu)), "");
  EXPECT_EQ(load_message(r->load(load_request(peeker().op, peeker().built, Device::Cpu))), "");
  const std::optional<LoadError> late = r->prepare(Device::Cpu);
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(late->kind, LoadError::Kind::Refused);
  EXPECT_NE(late->message.find("prepare after a load"), std::string::npos) << late->message;
  EXPECT_TRUE(r->alive());
  EXPECT_EQ(peek(*r, "/nonexistent"), 0);
  // Staging needs a runner started with a staging root.
  EXPECT_THROW(r->stage(peeker().built.artifact), std::runtime_error);
}

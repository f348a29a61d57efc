// Runner*: kg-runner in the sandbox through RunnerClient. Crash isolation with real crashing
// kernels (segfault, abort, infinite loop, huge allocation): each is a structured outcome for
// that call, and a fresh runner serves the next.
#include "loader_test_util.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>

#include "kernelgate/protocol.h"

namespace fs = std::filesystem;
using namespace kg::loader;
using namespace kg::loader::test;

namespace {

const char* kCrashers = R"(#include <ATen/ATen.h>
#include <cstdlib>
#include <cstring>
#include <vector>
// The sample's first element says how to misbehave.
at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  float mode = self.numel() ? self.contiguous().data_ptr<float>()[0] : 0;
  if (mode == 1) { volatile int* p = nullptr; *p = 1; }                 // segfault
  if (mode == 2) std::abort();                                          // abort
  if (mode == 3) { volatile unsigned long x = 0; for (;;) x = x + 1; }  // infinite loop
  if (mode == 4) {                                                      // huge allocation, touched
    std::vector<char*> keep;
    for (int i = 0; i < 1 << 20; ++i) { char* p = static_cast<char*>(std::malloc(64 << 20)); if (!p) break; std::memset(p, 1, 64 << 20); keep.push_back(p); }
  }
  if (mode == 5) throw std::runtime_error("kernel says no");
  return self.clamp_min(0);
}
)";

struct Fixture : BuiltRelu {
  Fixture() : BuiltRelu(kCrashers) {}
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

RunnerOptions runner_options(const std::string& artifact) {
  RunnerOptions o;
  o.runner_path = default_runner_path();
  o.ro_binds = {fs::path(artifact).parent_path().string()};
  o.limits.cpu_s = 20;
  o.limits.wall_s = 30;
  o.limits.memory_mb = 1024;
  return o;
}

std::unique_ptr<RunnerClient> start_loaded() {
  auto& f = fixture();
  auto r = RunnerClient::start(runner_options(f.built.artifact));
  std::string err = load_message(r->load(load_request(f.op, f.built, Device::Cpu)));
  EXPECT_EQ(err, "");
  return r;
}

std::vector<c10::IValue> input(float mode) {
  at::Tensor t = at::randn({64});
  t[0] = mode;
  return {t};
}

}  // namespace

TEST(RunnerCall, ReturnsOutputsAndArgumentsAfter) {
  ASSERT_TRUE(fixture().built.ok) << all_diagnostics(fixture().built);
  auto r = start_loaded();
  auto in = input(0);
  CallOutcome out = r->call(in, 1, 10);
  ASSERT_EQ(out.kind, CallOutcome::Kind::Ok) << out.message;
  ASSERT_EQ(out.returns.size(), 1u);
  EXPECT_TRUE(out.returns[0].toTensor().equal(in[0].toTensor().clamp_min(0)));
  ASSERT_EQ(out.args_after.size(), 1u);
  EXPECT_TRUE(out.args_after[0].toTensor().equal(in[0].toTensor()));
  r->finish();
}

TEST(RunnerCall, TimedCallsReportPerCallTimesBoundedByTheSupervisorsClock) {
  ASSERT_TRUE(fixture().built.ok);
  auto r = start_loaded();
  CallOptions o;
  o.warmup = 2;
  o.reps = 5;
  CallOutcome out = r->call(input(0), 1, 30, o);
  ASSERT_EQ(out.kind, CallOutcome::Kind::Ok) << out.message;
  ASSERT_EQ(out.times_s.size(), 5u);
  EXPECT_EQ(out.timer, "steady_clock");
  double sum = 0;
  for (double t : out.times_s) sum += t;
  EXPECT_GT(sum, 0);
  EXPECT_LE(sum, out.supervisor_wall_s);
  EXPECT_EQ(out.idle_wait_s.size(), 5u);
  r->finish();
}

TEST(RunnerCall, AnExceptionIsAnOpErrorAndTheRunnerLives) {
  ASSERT_TRUE(fixture().built.ok);
  auto r = start_loaded();
  CallOutcome out = r->call(input(5), 1, 10);
  EXPECT_EQ(out.kind, CallOutcome::Kind::OpError);
  EXPECT_NE(out.message.find("kernel says no"), std::string::npos) << out.message;
  EXPECT_TRUE(r->alive());
  EXPECT_EQ(r->call(input(0), 1, 10).kind, CallOutcome::Kind::Ok);
  r->finish();
}

struct CrashCase {
  const char* name;
  float mode;
  CallOutcome::Kind kind;
  kg::sandbox::Status status;
};

class RunnerCrash : public ::testing::TestWithParam<CrashCase> {};

TEST_P(RunnerCrash, IsStructuredAndAFreshRunnerServesTheNextCall) {
  ASSERT_TRUE(fixture().built.ok) << all_diagnostics(fixture().built);
  const CrashCase& c = GetParam();
  auto r = start_loaded();
  CallOutcome out = r->call(input(c.mode), 1, c.mode == 3 ? 3 : 20);
  EXPECT_EQ(out.kind, c.kind) << out.message;
  // A timeout is the supervisor's own kill: the outcome says Timeout, the record who killed.
  if (c.kind != CallOutcome::Kind::Timeout) EXPECT_EQ(out.record.status, c.status) << out.record.to_json();
  else EXPECT_NE(out.record.message.find("time limit"), std::string::npos) << out.record.to_json();
  EXPECT_FALSE(r->alive());
  // The dead runner answers no more; a fresh one does, with the same artifact.
  EXPECT_EQ(r->call(input(0), 1, 5).kind, CallOutcome::Kind::Died);
  auto fresh = start_loaded();
  CallOutcome ok = fresh->call(input(0), 1, 10);
  EXPECT_EQ(ok.kind, CallOutcome::Kind::Ok) << ok.message;
  fresh->finish();
}

INSTANTIATE_TEST_SUITE_P(Kernels, RunnerCrash,
                         ::testing::Values(CrashCase{"segfault", 1, CallOutcome::Kind::Died, kg::sandbox::Status::SG},
                                           CrashCase{"abort", 2, CallOutcome::Kind::Died, kg::sandbox::Status::SG},
                                           CrashCase{"infinite_loop", 3, CallOutcome::Kind::Timeout, kg::sandbox::Status::TO},
                                           CrashCase{"huge_allocation", 4, CallOutcome::Kind::Died, kg::sandbox::Status::ML}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(RunnerLoad, MissingArtifactIsAMessageNotACrash) {
  auto r = RunnerClient::start(runner_options("/tmp/x.so"));
  std::string err = load_message(r->load("/nonexistent/x.so", "kgsub::relu__default", "relu.default"));
  EXPECT_NE(err.find("dlopen failed"), std::string::npos) << err;
  r->finish();
}

TEST(RunnerLoad, AtenSelfCheckNeedsNoArtifact) {
  auto r = RunnerClient::start(runner_options("/tmp/x"));
  ASSERT_EQ(load_message(r->load("", "", "relu.default")), "");
  auto in = input(0);
  CallOutcome out = r->call(in, 1, 10);
  ASSERT_EQ(out.kind, CallOutcome::Kind::Ok) << out.message;
  EXPECT_TRUE(out.returns[0].toTensor().equal(in[0].toTensor().relu()));
  r->finish();
}

TEST(RunnerCuda, LaunchesNeedAGpu) {
  // On CPU machines a cuda or nvrtc load is refused with the reason; on a GPU machine the
  // examples run end to end through `kernelgate eval` (tools/gpu-check).
  if (gpu_available()) GTEST_SKIP() << "GPU present: covered by tools/gpu-check's end-to-end evals";
  auto r = RunnerClient::start(runner_options("/tmp/x"));
  LoadRequest req;
  req.artifact = "/tmp/x/kernel.cubin";
  req.aten_op = "relu.default";
  req.kind = Kind::Nvrtc;
  req.device = Device::Cuda;
  std::string err = load_message(r->load(req));
  EXPECT_NE(err.find("without CUDA"), std::string::npos) << err;
  r->finish();
}

// ---- on a GPU machine: the cuda and nvrtc examples through RunnerClient ------------------------

namespace {

struct GpuOp {
  OpFolder op;
  BuildResult built;
};

GpuOp build_example(const std::string& rel) {
  GpuOp g;
  auto scan = scan_submission(example_dir(rel));
  EXPECT_EQ(scan.ops.size(), 1u);
  g.op = scan.ops.at(0);
  g.built = build(g.op, options(example_dir(rel)));
  EXPECT_TRUE(g.built.ok) << all_diagnostics(g.built);
  return g;
}

std::unique_ptr<RunnerClient> start_gpu(const GpuOp& g, std::string* err) {
  RunnerOptions o = runner_options(g.built.artifact);
  o.profile = kg::sandbox::Profile::RunCuda;
  o.limits.memory_mb = 16384;  // the CUDA context maps a lot of address space
  auto r = RunnerClient::start(o);
  *err = load_message(r->load(load_request(g.op, g.built, Device::Cuda)));
  return r;
}

// relu's smoke shapes: contiguous, transposed view, 0-d, empty, f16, f64, special values.
std::vector<at::Tensor> relu_inputs() {
  at::Tensor special = at::randn({1000});
  special[0] = std::numeric_limits<float>::quiet_NaN();
  special[1] = -std::numeric_limits<float>::infinity();
  special[2] = -0.0f;
  return {at::randn({64, 128}),
          at::randn({48, 32}).t(),
          at::randn({}),
          at::randn({0, 7}),
          at::randn({16, 64}).to(at::kHalf),
          at::randn({4096}, at::kDouble),
          special};
}

void expect_relu(const GpuOp& g, const std::string& what) {
  std::string err;
  auto r = start_gpu(g, &err);
  ASSERT_EQ(err, "") << what;
  for (const at::Tensor& x : relu_inputs()) {
    CallOptions o;
    o.device = Device::Cuda;
    o.output_like = {c10::IValue(x.relu())};
    CallOutcome out = r->call({x}, 1, 30, o);
    ASSERT_EQ(out.kind, CallOutcome::Kind::Ok) << what << " " << x.sizes() << ": " << out.message;
    at::Tensor got = out.returns.at(0).toTensor();
    EXPECT_EQ(got.device().type(), c10::DeviceType::CPU);
    EXPECT_TRUE(got.equal(x.relu()) || (got.isnan().equal(x.isnan()) && at::nan_to_num(got).equal(at::nan_to_num(x.relu()))))
        << what << " " << x.sizes() << " " << x.scalar_type();
  }
  // The timing loop on the GPU: CUDA events, idle waits measured, L2 flushed.
  CallOptions o;
  o.device = Device::Cuda;
  o.warmup = 3;
  o.reps = 20;
  at::Tensor big = at::randn({1 << 22});
  o.output_like = {c10::IValue(big.relu())};
  CallOutcome out = r->call({big}, 1, 60, o);
  ASSERT_EQ(out.kind, CallOutcome::Kind::Ok) << out.message;
  EXPECT_EQ(out.timer, "cuda_event");
  EXPECT_EQ(out.times_s.size(), 20u);
  for (double t : out.times_s) EXPECT_GT(t, 0);
  EXPECT_TRUE(out.observations.empty() || out.observations == kg::policy::ObservationSet{kg::policy::RunnerObservation::ThreadsLeftRunning})
      << "an honest kernel leaves no evidence";
  r->finish();
}

}  // namespace

TEST(RunnerGpu, CudaExampleIsRightOnEverySmokeShape) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU here (or libtorch without CUDA): launches are skipped";
  expect_relu(build_example("cuda/correct"), "cuda");
}

TEST(RunnerGpu, NvrtcExampleIsRightOnEverySmokeShape) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU here (or libtorch without CUDA): launches are skipped";
  expect_relu(build_example("nvrtc/correct"), "nvrtc");
}

TEST(RunnerGpu, IllegalAddressKillsOnlyThatRunner) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU here (or libtorch without CUDA): launches are skipped";
  TempDir d;
  GpuOp g;
  g.op = make_op(d.path, "relu.default",
                 {{"relu__default_implementation.cu",
                   "#include <torch/extension.h>\n"
                   "__global__ void bad(float* p) { p[threadIdx.x] = 1.f; }\n"
                   "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) {\n"
                   "  bad<<<1, 32>>>(reinterpret_cast<float*>(0x10));\n"
                   "  return self.clone();\n}\n"}});
  g.built = build(g.op, options(d.path));
  ASSERT_TRUE(g.built.ok) << all_diagnostics(g.built);
  std::string err;
  auto r = start_gpu(g, &err);
  ASSERT_EQ(err, "");
  CallOptions o;
  o.device = Device::Cuda;
  CallOutcome out = r->call({at::randn({8})}, 1, 30, o);
  EXPECT_EQ(out.kind, CallOutcome::Kind::Died) << out.message;
  EXPECT_NE(out.message.find("device error"), std::string::npos) << out.message;
  EXPECT_FALSE(r->alive());
  // A fresh runner on the same device works.
  GpuOp ok = build_example("cuda/correct");
  auto fresh = start_gpu(ok, &err);
  ASSERT_EQ(err, "");
  EXPECT_EQ(fresh->call({at::randn({8})}, 1, 30, o).kind, CallOutcome::Kind::Ok);
  fresh->finish();
}

TEST(RunnerCall, TimedCallsRotateThroughInputSetsAndEachSetsOutputsComeBack) {
  ASSERT_TRUE(fixture().built.ok);
  auto r = start_loaded();
  CallOptions o;
  o.warmup = 1;
  o.reps = 6;
  for (int k = 0; k < 3; ++k) o.more_inputs.push_back(input(0));
  auto in = input(0);
  CallOutcome out = r->call(in, 1, 30, o);
  ASSERT_EQ(out.kind, CallOutcome::Kind::Ok) << out.message;
  EXPECT_TRUE(out.returns[0].toTensor().equal(in[0].toTensor().clamp_min(0)));
  ASSERT_EQ(out.more.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    const at::Tensor want = o.more_inputs[k][0].toTensor();
    EXPECT_TRUE(out.more[k].returns[0].toTensor().equal(want.clamp_min(0))) << "set " << k + 1;
    EXPECT_TRUE(out.more[k].args_after[0].toTensor().equal(want)) << "set " << k + 1;
  }
  // More sets than calls cannot all be used.
  o.reps = 2;
  o.warmup = 0;
  EXPECT_THROW(r->call(in, 1, 30, o), std::invalid_argument);
  r->finish();
}

// A kernel that memoises its output by the input's content (docs/threats.md B7) and is slow on a miss:
// timed on one value set it looks fast after the first call; rotated through fresh values every
// call misses.
TEST(RunnerCall, RotatedValuesDefeatAContentMemo) {
  const char* memo = R"(#include <ATen/ATen.h>
#include <chrono>
#include <map>
#include <thread>
#include <vector>
at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  static std::map<std::vector<float>, at::Tensor> seen;
  at::Tensor c = self.contiguous();
  std::vector<float> key(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  auto it = seen.find(key);
  if (it != seen.end()) return it->second.clone();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  at::Tensor out = self.clamp_min(0);
  seen[key] = out.clone();
  return out;
}
)";
  TempDir dir;
  OpFolder op = make_op(dir.path, "relu.default", {{"relu__default_implementation.cpp", memo}});
  BuildResult built = build(op, options(dir.path));
  ASSERT_TRUE(built.ok) << all_diagnostics(built);
  auto r = RunnerClient::start(runner_options(built.artifact));
  ASSERT_EQ(load_message(r->load(load_request(op, built, Device::Cpu))), "");
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  CallOptions same;
  same.warmup = 1;
  same.reps = 5;
  CallOutcome replayed = r->call(input(0), 1, 60, same);
  ASSERT_EQ(replayed.kind, CallOutcome::Kind::Ok) << replayed.message;
  EXPECT_LT(median(replayed.times_s), 0.010) << "one value set: the memo hits (the contrast that makes this test able to fail)";
  CallOptions rotated = same;
  for (int k = 0; k < 5; ++k) rotated.more_inputs.push_back(input(0));
  CallOutcome fresh = r->call(input(0), 1, 60, rotated);
  ASSERT_EQ(fresh.kind, CallOutcome::Kind::Ok) << fresh.message;
  EXPECT_GE(median(fresh.times_s), 0.015) << "every timed call saw new values: the memo never hits";
  r->finish();
}

// An output cache keyed on the addresses of all inputs (here: two, add.Tensor's self and other)
// hits only when every input is back at its old address at once: the in-place call puts them
// there, fresh inputs of the same shape do not. The control is an honest add on the same calls.
namespace {
const char* kAddressCache = R"(#include <ATen/ATen.h>
#include <map>
#include <utility>
at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  static std::map<std::pair<const void*, const void*>, at::Tensor> cache;
  auto key = std::make_pair(self.data_ptr(), other.data_ptr());
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  at::Tensor out = at::empty(self.sizes(), self.options());
  const float* a = self.contiguous().data_ptr<float>();
  const float* b = other.contiguous().data_ptr<float>();
  const float s = alpha.to<float>();
  for (int64_t i = 0; i < self.numel(); ++i) out.data_ptr<float>()[i] = a[i] + s * b[i];
  cache[key] = out;
  return out;
}
)";
const char* kHonestAdd = R"(#include <ATen/ATen.h>
at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  at::Tensor out = at::empty(self.sizes(), self.options());
  const float* a = self.contiguous().data_ptr<float>();
  const float* b = other.contiguous().data_ptr<float>();
  const float s = alpha.to<float>();
  for (int64_t i = 0; i < self.numel(); ++i) out.data_ptr<float>()[i] = a[i] + s * b[i];
  return out;
}
)";

struct AddRunner {
  explicit AddRunner(const char* source) {
    op = make_op(dir.path, "add.Tensor", {{"add__Tensor_implementation.cpp", source}});
    built = build(op, options(dir.path));
    EXPECT_TRUE(built.ok) << all_diagnostics(built);
    if (!built.ok) return;
    runner = RunnerClient::start(runner_options(built.artifact));
    EXPECT_EQ(load_message(runner->load(load_request(op, built, Device::Cpu))), "");
  }
  TempDir dir;
  OpFolder op;
  BuildResult built;
  std::unique_ptr<RunnerClient> runner;
};

std::vector<c10::IValue> add_inputs() { return {at::randn({4, 33}), at::randn({4, 33}), c10::Scalar(1.0)}; }

// The judged call on `first`, then `second` written into its buffers.
CallOutcome in_place_pair(RunnerClient& r, const std::vector<c10::IValue>& first, const std::vector<c10::IValue>& second) {
  CallOptions o;
  o.more_inputs = {second};
  o.second_set_in_place = true;
  return r.call(first, 1, 30, o);
}
}  // namespace

TEST(RunnerInPlace, AnOutputCacheKeyedOnEveryInputAddressReplaysOnlyThere) {
  AddRunner cheat(kAddressCache);
  ASSERT_TRUE(cheat.runner);
  const auto first = add_inputs(), fresh = add_inputs(), again = add_inputs();
  const at::Tensor fresh_sum = fresh[0].toTensor() + fresh[1].toTensor();
  // Fresh inputs in calls of their own: the allocator does not hand both old addresses back.
  CallOutcome a = cheat.runner->call(first, 1, 30), b = cheat.runner->call(again, 1, 30);
  ASSERT_EQ(b.kind, CallOutcome::Kind::Ok) << b.message;
  EXPECT_TRUE(b.returns[0].toTensor().allclose(again[0].toTensor() + again[1].toTensor()));
  CallOutcome pair = in_place_pair(*cheat.runner, first, fresh);
  ASSERT_EQ(pair.kind, CallOutcome::Kind::Ok) << pair.message;
  ASSERT_EQ(pair.more.size(), 1u);
  // The judged call's own answer depends on the allocator: its inputs may land on an earlier
  // call's freed buffers (a's or b's) and hit that entry. The second set, written into the judged
  // call's buffers, always has every input at an old address at once, so the cache replays there.
  EXPECT_TRUE(pair.more[0].returns[0].toTensor().equal(pair.returns[0].toTensor())) << "every input at its old address: the cache replays";
  EXPECT_FALSE(pair.more[0].returns[0].toTensor().allclose(fresh_sum));
  // Each call's arguments come back as they were after it: the first call's are not overwritten.
  EXPECT_TRUE(pair.args_after[0].toTensor().equal(first[0].toTensor()));
  EXPECT_TRUE(pair.more[0].args_after[1].toTensor().equal(fresh[1].toTensor()));
  cheat.runner->finish();
}

TEST(RunnerInPlace, ControlAnHonestKernelIsRightOnBothCalls) {
  AddRunner honest(kHonestAdd);
  ASSERT_TRUE(honest.runner);
  const auto first = add_inputs(), fresh = add_inputs();
  CallOutcome pair = in_place_pair(*honest.runner, first, fresh);
  ASSERT_EQ(pair.kind, CallOutcome::Kind::Ok) << pair.message;
  ASSERT_EQ(pair.more.size(), 1u);
  EXPECT_TRUE(pair.returns[0].toTensor().allclose(first[0].toTensor() + first[1].toTensor()));
  EXPECT_TRUE(pair.more[0].returns[0].toTensor().allclose(fresh[0].toTensor() + fresh[1].toTensor()));
  EXPECT_TRUE(pair.args_after[0].toTensor().equal(first[0].toTensor()));
  EXPECT_TRUE(pair.more[0].args_after[0].toTensor().equal(fresh[0].toTensor()));
  // Values that the first call's buffers cannot hold as they are (another shape: an out=
  // argument the kernel resized) are passed in buffers of their own, never cut to fit.
  const std::vector<c10::IValue> wider = {at::randn({4, 34}), at::randn({4, 34}), c10::Scalar(1.0)};
  CallOutcome other = in_place_pair(*honest.runner, first, wider);
  ASSERT_EQ(other.kind, CallOutcome::Kind::Ok) << other.message;
  ASSERT_EQ(other.more.size(), 1u);
  EXPECT_TRUE(other.more[0].returns[0].toTensor().allclose(wider[0].toTensor() + wider[1].toTensor()));
  honest.runner->finish();
}

// Files a kernel opens once the artifact is loaded are seen by the supervisor itself (the
// sandbox's listener, not the runner's word): refused with EACCES and named in the outcome. The
// control is the same kernel opening only the runtime's own files (its artifact, /proc/self).
namespace {
const char* kOpener = R"(#include <ATen/ATen.h>
#include <fcntl.h>
#include <unistd.h>
#include <string>
// The sample's first element picks what to open: 1 the supervisor's command line and the
// results, 2 only what the runtime itself reads.
at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  float mode = self.numel() ? self.contiguous().data_ptr<float>()[0] : 0;
  std::string opened;
  auto try_open = [&](const char* path) {
    int fd = ::openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    opened += fd >= 0 ? "1" : "0";
    if (fd >= 0) ::close(fd);
  };
  if (mode == 1) { try_open("/proc/1/cmdline"); try_open("../results.json"); }
  if (mode == 2) { try_open("/proc/self/status"); try_open("/proc/self/maps"); }
  at::Tensor out = self.clamp_min(0);
  if (mode != 0) out[0] = static_cast<float>(std::stoi("1" + opened));  // which opens succeeded
  return out;
}
)";
}  // namespace

TEST(RunnerFileOpens, OpensOutsideTheRuntimeAreRefusedAndNamedWithTheirPaths) {
  BuiltRelu opener(kOpener);
  ASSERT_TRUE(opener.built.ok) << all_diagnostics(opener.built);
  auto r = RunnerClient::start(runner_options(opener.built.artifact));
  ASSERT_EQ(load_message(r->load(load_request(opener.op, opener.built, Device::Cpu))), "");
  CallOutcome quiet = r->call(input(0), 1, 30);
  ASSERT_EQ(quiet.kind, CallOutcome::Kind::Ok) << quiet.message;
  EXPECT_TRUE(quiet.refused_opens.empty()) << "an honest call opens nothing outside the runtime";
  CallOutcome out = r->call(input(1), 1, 30);
  ASSERT_EQ(out.kind, CallOutcome::Kind::Ok) << out.message;
  EXPECT_EQ(out.returns[0].toTensor()[0].item<float>(), 100.f) << "both opens failed inside the kernel";
  ASSERT_EQ(out.refused_opens.size(), 2u);
  EXPECT_EQ(out.refused_opens[0].syscall, "openat");
  EXPECT_EQ(out.refused_opens[0].path, "/proc/1/cmdline");
  EXPECT_EQ(out.refused_opens[1].path, "../results.json");
  CallOutcome own = r->call(input(2), 1, 30);
  ASSERT_EQ(own.kind, CallOutcome::Kind::Ok) << own.message;
  EXPECT_EQ(own.returns[0].toTensor()[0].item<float>(), 111.f) << "the process's own /proc entries open";
  EXPECT_TRUE(own.refused_opens.empty());
  r->finish();
}

// Evaluating a submission: build each op folder, run its samples in a sandboxed runner, judge
// every call against the libtorch reference, time the passing ops against eager run by a clean
// runner through the same loop, and bound every claimed time by the supervisor's clock and the
// device's roofline. This file is the orchestrator: each op's evaluation is a short list of named
// steps, each concern in its own file (op_evaluation.h).
#include "baseline.h"
#include "op_evaluation.h"

#include "kernelgate/harness.h"
#include "kernelgate/inline_inspection.h"
#include "kernelgate/loader.h"
#include "kernelgate/protocol.h"
#include "kernelgate/rules.h"
#include "kernelgate/runner_pool.h"
#include "kernelgate/wire.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <shared_mutex>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;

namespace kg::harness {
namespace {

OpResult op_error(const std::string& op, const std::string& kind, const std::string& error) {
  OpResult r;
  r.op = op;
  r.kind = kind;
  r.verdict = policy::Verdict::Error;
  r.error = error;
  return r;
}

}  // namespace

namespace evaluation {

std::mt19937_64 sample_rng(uint64_t seed, const std::string& op, size_t index) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : op) h = (h ^ c) * 1099511628211ULL;
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(h),
                    static_cast<uint32_t>(h >> 32), static_cast<uint32_t>(index)};
  return std::mt19937_64(seq);
}

int64_t input_numel(const std::vector<c10::IValue>& inputs) {
  int64_t n = 0;
  for (const auto& v : inputs)
    if (v.isTensor() && v.toTensor().defined()) n += v.toTensor().numel();
  return n;
}

std::string fmt(double v) {
  std::ostringstream o;
  o.precision(4);
  o << v;
  return o.str();
}

loader::RunnerOptions runner_options(const EvalOptions& options, const policy::Policy& policy, const std::string& artifact) {
  loader::RunnerOptions ro;
  ro.runner_path = options.runner_path.empty() ? loader::default_runner_path() : options.runner_path;
  if (!artifact.empty()) ro.ro_binds = {fs::path(artifact).parent_path().string()};
  ro.profile = options.device == names::Device::Cuda ? sandbox::Profile::RunCuda : sandbox::Profile::RunCpu;
  ro.limits.cpu_s = std::max(60.0, policy.run_call_time_s * 10);
  ro.limits.wall_s = std::max(120.0, policy.run_call_time_s * 20);
  ro.limits.memory_mb = static_cast<uint64_t>(policy.run_memory_mb);
  ro.limits.max_processes = 64;
  if (options.device == names::Device::Cuda) ro.gpu = options.device_pool;
  return ro;
}

void Run::progress(const std::string& op, const char* phase, size_t samples_done, size_t samples_total) const {
  if (!options.on_progress) return;
  EvalProgress p;
  p.ops_done = ops_done;
  p.ops_total = ops_total;
  p.op = op;
  p.phase = phase;
  p.samples_done = samples_done;
  p.samples_total = samples_total;
  options.on_progress(p);
}

loader::RunnerOptions Run::runner_options(const std::string& artifact) const {
  return evaluation::runner_options(options, policy, artifact);
}

}  // namespace evaluation

struct EagerRunner {
  std::unique_ptr<loader::RunnerClient> runner;
};

std::shared_ptr<EagerRunner> make_eager_runner() { return std::make_shared<EagerRunner>(); }

void finish_eager_runner(EagerRunner& slot) {
  if (slot.runner && slot.runner->alive()) slot.runner->finish();
  slot.runner.reset();
}

namespace evaluation {

std::unique_ptr<loader::RunnerClient>& Run::eager() const { return eager_slot->runner; }

loader::BuildOptions Run::build_options() const { return harness::build_options(policy, work_dir, options.submission); }

std::optional<loader::LoadError> Run::obtain(std::unique_ptr<loader::RunnerClient>* runner, loader::LoadRequest* request) const {
  try {
    if (pool && pool->serves(runner_options(""))) {
      *runner = pool->take();
      request->artifact = (*runner)->stage(request->artifact);
      return std::nullopt;
    }
    *runner = loader::RunnerClient::start(runner_options(request->artifact));
  } catch (const std::exception& e) { return loader::LoadError{loader::LoadError::Kind::Died, e.what()}; }
  if (device() == loader::Device::Cuda) return (*runner)->prepare(device());
  return std::nullopt;
}

std::optional<loader::LoadError> Run::start(std::unique_ptr<loader::RunnerClient>* runner, const loader::LoadRequest& request) const {
  loader::LoadRequest staged = request;
  if (auto err = obtain(runner, &staged)) return err;
  return (*runner)->load(staged);
}

loader::LoadRequest Run::eager_request(const std::string& op) const {
  loader::LoadRequest r;
  r.aten_op = op;
  r.device = device();
  return r;
}

OpState::OpState(Run& r, const loader::OpFolder& f) : run(r), policy(r.policy), folder(f) {
  result.op = f.op;
  result.kind = loader::kind_name(f.kind);
}

OpState::~OpState() {
  loader::remove_uncached(uncached);
  for (const loader::BuildResult& b : extensions_uncached) loader::remove_uncached(b);
}

bool OpState::must_stop() {
  if (stopped.empty() && run.options.stop_reason) stopped = run.options.stop_reason();
  return !stopped.empty();
}

size_t OpState::rng_index(size_t i) const { return run.options.repro ? static_cast<size_t>(run.options.repro->index) : i; }

loader::CallOptions OpState::call_options(const std::vector<c10::IValue>& ref_returns, int warmup, int reps) const {
  loader::CallOptions o;
  o.warmup = warmup;
  o.reps = reps;
  o.device = run.device();
  if (folder.kind == loader::Kind::Nvrtc) o.output_like = ref_returns;
  o.returns_bytes_hint = wire::encoded_size(ref_returns);  // room for outputs as large as the reference's
  return o;
}

namespace {

bool resolve_schema(OpState& op) {
  try {
    op.schema = &loader::aten_schema(op.folder.op);
  } catch (const std::exception& e) {
    op.result.error = e.what();
    return false;
  }
  return true;
}

// The samples to judge; the suite's samples no tensor can be built for are reported as skipped
// (the sample's fault, never judged). Empty (recorded as the op's error) when none is left.
std::vector<Sample> collect_samples(OpState& op) {
  const EvalOptions& options = op.run.options;
  OpResult& r = op.result;
  r.suite = options.repro ? "repro" : suite_for_op(options.suite, op.folder.op);
  const std::vector<Sample> all = options.repro ? std::vector<Sample>{options.repro->sample} : suite_samples(r.suite, op.folder.op);
  if (!options.repro)
    for (auto& entry : suite_unbuildable_samples(r.suite, op.folder.op)) r.skipped.push_back(std::move(entry));
  if (all.empty() && r.suite.empty()) {
    std::string order;
    for (const std::string& s : auto_suite_order()) order += (order.empty() ? "" : ", ") + s;
    r.error = "no built-in suite has samples for " + op.folder.op + " (" + order +
              "); judge it on your own trace file with --suite FILE (docs/suites.md, \"Your own traces\")";
  } else if (all.empty()) {
    r.error = "suite '" + r.suite + "' has no samples for " + op.folder.op;
    if (!r.skipped.empty()) r.error += " that can be built (see skipped)";
  }
  r.total = static_cast<int>(all.size());
  return all;
}

// Static rules on the artifact, read as hostile bytes (the supervisor never loads it).
// A finding is kept only when the submission added it: what the op's stub built the same way
// also has (header inlines, glue, runtime) is not the submission's doing. Without that baseline
// the findings cannot be told apart from the toolchain's own, so none is charged: the op's error
// names the baseline (false, recorded).
// The static rules' findings on `artifact` (read as hostile bytes; throws when it is not a shared
// object), less what `baseline` (the toolchain's own stub, built only when there is a finding) has
// too. nullopt, with *why, when that baseline is needed and unavailable.
std::optional<std::vector<policy::Finding>> findings_beyond_baseline(
    const std::string& artifact, const policy::Policy& policy, const std::string& op,
    const std::function<std::optional<policy::ArtifactInfo>(std::string*)>& baseline, std::string* why) {
  policy::ArtifactInfo info = policy::read_artifact(artifact);
  std::vector<policy::Finding> findings = policy::inspect_artifact(info, policy, op);
  if (findings.empty()) return findings;
  const auto base = baseline(why);
  if (!base) return std::nullopt;
  subtract_baseline(info, *base);
  return policy::inspect_artifact(info, policy, op);
}

bool inspect(OpState& op, const std::string& artifact, const loader::BuildOptions& bo) {
  // A cubin has no host code; a python source is not machine code (its calls are judged at run time).
  if (op.folder.kind == loader::Kind::Nvrtc || op.folder.kind == loader::Kind::Python) return true;
  op.result.inspected = true;
  try {
    std::string why;
    const auto findings = findings_beyond_baseline(
        artifact, op.policy, op.folder.op, [&](std::string* w) { return toolchain_baseline(op.folder, bo, w); }, &why);
    if (!findings) {
      op.result.error = "kernelgate's toolchain baseline (the " + std::string(loader::kind_name(op.folder.kind)) + " stub of " +
                        op.folder.op + ") is unavailable, so the artifact's static findings cannot be judged: " + why;
      return false;
    }
    for (const auto& f : *findings) violation(op.result, f.rule, f.evidence);
  } catch (const std::exception& e) {
    violation(op.result, policy::Rule::ProtocolViolation, std::string("the built artifact cannot be read as a shared object: ") + e.what());
  }
  return true;
}

// Builds the op folder and inspects the artifact. False (recorded) when it did not build.
bool build(OpState& op) {
  if (op.run.options.self_check) return true;  // the runner calls the aten overload itself
  OpResult& r = op.result;
  const loader::BuildOptions bo = op.run.build_options();
  std::optional<loader::BuildResult> ahead = op.run.built_ahead ? op.run.built_ahead(op.folder.op) : std::nullopt;
  loader::BuildResult built = ahead ? std::move(*ahead) : loader::build(op.folder, bo);
  op.uncached.uncached_dir = built.uncached_dir;
  r.build_s = built.seconds;
  r.build_cache_hit = built.cache_hit;
  r.build_cache_rejected = built.cache_rejected;
  r.build_notes = built.notes;
  r.build_log = built.log.substr(0, 8000);
  if (built.ok) {
    op.request = loader::load_request(op.folder, built, op.run.device());
    return inspect(op, built.artifact, bo) && build_python_op_extensions(op, bo);
  }
  if (built.record.status == sandbox::Status::XX && !built.record.message.empty()) {
    r.error = "build sandbox failed: " + built.record.message;
  } else {
    Failure f;
    f.category = policy::Category::CompileError;
    f.message = built.error;
    r.failures.push_back(f);
    // A vendor library's API among what the link could not find is the submission's choice of
    // library, judged like an artifact that imports it (the compile error stays, with its message).
    if (std::string evidence = policy::rule_forbidden_library_unlinked(loader::undefined_references(built.log), op.policy);
        !evidence.empty())
      violation(r, policy::Rule::ForbiddenLibrary, evidence);
  }
  return false;
}

// False (the op's error) when the op's kind needs a device this evaluation does not have.
bool runnable_here(OpState& op) {
  if (op.folder.kind == loader::Kind::Cpu || op.folder.kind == loader::Kind::Python || op.run.device() != loader::Device::Cpu) return true;
  op.result.error = std::string("built; not run: the ") + loader::kind_name(op.folder.kind) +
                    " kind needs a GPU (evaluate with --device cuda on a machine that has one)";
  return false;
}

// Records why the op's runner did not start or load its artifact.
void record_start_failure(OpState& op, const loader::LoadError& err) {
  if (const std::string limit = op.folder.kind == loader::Kind::Python ? python_load_limit(err.message) : ""; !limit.empty()) {
    op.result.error = "kernelgate cannot judge this kernel yet: " + limit + ":\n" + err.message;
    return;
  }
  if (err.kind == loader::LoadError::Kind::ProtocolViolation) violation(op.result, policy::Rule::ProtocolViolation, err.message);
  Failure f;
  // A python source that does not compile is found only when the runner's interpreter loads it.
  const bool syntax = op.folder.kind == loader::Kind::Python && err.kind == loader::LoadError::Kind::Refused &&
                      err.message.rfind(protocol::kPythonDoesNotCompile, 0) == 0;
  f.category = syntax ? policy::Category::CompileError : policy::Category::RuntimeError;
  f.message = "loading the artifact failed: " + err.message;
  op.result.failures.push_back(f);
}

// The op's runner with its artifact loaded (the aten overload itself for --self-check). On cuda the runner is obtained (started, its device
// set up) before `shared` is taken: that runs beside other ops' calls, timed ones included (see
// loader::RunnerPool::Quiet for why that is sound), and only the load of submission code waits
// for the device. On the CPU a runner's start is CPU work that would move CPU timings, so all of
// it waits. False (recorded) when it fails.
bool start_runner(OpState& op, std::shared_lock<DeviceLock>& shared, OpResult& r) {
  auto t = Clock::now();
  loader::LoadRequest staged = op.request;
  const bool beside_timing = op.run.device() == loader::Device::Cuda;
  std::optional<loader::LoadError> err;
  if (beside_timing) err = op.run.obtain(&op.runner, &staged);
  r.runner_start_s = seconds_since(t);
  t = Clock::now();
  if (op.run.options.device_lock) shared = std::shared_lock<DeviceLock>(*op.run.options.device_lock);
  r.device_wait_s += seconds_since(t);
  t = Clock::now();
  if (!err && !beside_timing) err = op.run.obtain(&op.runner, &staged);
  if (!err) err = op.runner->load(staged);
  r.runner_start_s += seconds_since(t);
  if (err) {
    record_start_failure(op, *err);
    return false;
  }
  op.result.ran = true;
  op.result.device_work_watched =
      op.folder.kind == loader::Kind::Cuda && op.run.device() == loader::Device::Cuda && !op.run.options.self_check;
  return true;
}

// Each sample of the suite once; the ones that passed. A call that runs past the policy's time
// limit fails its sample and the others still run (a kernel may hang on one shape only); after a
// second one the op has shown it hangs, and each further sample would cost the whole limit again
// (a kernel that never returns: minutes on a suite), so the rest are skipped, saying why.
std::vector<Judged> judge_samples(OpState& op, const std::vector<Sample>& all) {
  std::vector<Judged> passed;
  int timeouts = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (op.must_stop()) break;
    const size_t failures_before = op.result.failures.size();
    auto j = judge_sample(op, all[i], i);
    if (j) passed.push_back(std::move(*j));
    op.run.progress(op.folder.op, "samples", i + 1, all.size());
    const bool timed_out = op.result.failures.size() > failures_before && op.result.failures.back().category == policy::Category::Timeout;
    if (!timed_out || ++timeouts < 2) continue;
    for (size_t k = i + 1; k < all.size(); ++k) {
      op.result.skipped.push_back(
          {trace::format_call(all[k].call), "not run: two samples ran past the time limit (the last: sample " + std::to_string(i) + ")"});
      op.result.total--;
    }
    break;
  }
  return passed;
}

bool timing_wanted(const OpState& op, const std::vector<Judged>& passed) {
  return op.run.options.timing && op.policy.timing && op.result.failures.empty() && !passed.empty();
}

// Asks the runner to exit and reads its record: a denied syscall, and anything the kernel wrote
// to stdout. With a device pool, the record as of the runner's answer: its teardown (its memory, a
// CUDA context) goes on in the pool, beside the op's verdict and what follows, and the pool's Quiet
// waits for it, so timed calls never share the device with it.
void finish_runner(OpState& op) {
  if (!op.runner_alive()) return;
  sandbox::Record rec;
  if (op.run.pool) {
    rec = op.runner->finish_answered();
    op.run.pool->retire(std::move(op.runner));
  } else {
    rec = op.runner->finish();
  }
  sandbox_violation(op.result, rec);
  // kg-runner itself never writes to stdout: whatever is there came from the submission,
  // and text shaped like a result is an attempt at the result channel (B17).
  if (!rec.stdout_text.empty())
    violation(op.result, policy::Rule::ProtocolViolation,
              "the kernel wrote " + std::to_string(rec.stdout_text.size()) +
                  " bytes to the runner's stdout (never read as results): " + rec.stdout_text.substr(0, 200));
}

void evaluate_samples(OpState& op) {
  OpResult& r = op.result;
  auto t = Clock::now();
  if (!resolve_schema(op)) return;
  const std::vector<Sample> all = collect_samples(op);
  r.samples_s = seconds_since(t);
  op.run.progress(op.folder.op, "build", 0, all.size());
  if (all.empty()) return;
  // The trials' largest draws go on beside the build and the judging (the CPU only).
  if (std::vector<DrawsAhead::Want> wants = enlarged_trial_draws(op, all); !wants.empty())
    op.draws_ahead = std::make_unique<DrawsAhead>(*op.schema, std::move(wants));
  t = Clock::now();
  const bool built = build(op);
  r.build_step_s = seconds_since(t);
  if (!built || !runnable_here(op)) return;
  if (op.run.options.self_check) op.request = op.run.eager_request(op.folder.op);
  // Builds never hold the device. Judging shares it with other ops' judging; timing has it alone.
  std::shared_lock<DeviceLock> shared;
  if (!start_runner(op, shared, r)) return;
  t = Clock::now();
  std::vector<Judged> passed = judge_samples(op, all);
  r.judging_parts.samples = seconds_since(t);
  // The timing's value sets are drawn beside the trials (which may take a while on the device).
  if (timing_wanted(op, passed))
    if (std::vector<DrawsAhead::Want> wants = rotation_draws(op, all, passed); !wants.empty())
      op.timing_draws_ahead = std::make_unique<DrawsAhead>(*op.schema, std::move(wants));
  if (!op.run.options.repro && !op.must_stop()) run_trials(op, all, passed);
  op.draws_ahead.reset();  // what the trials did not take: stopped before any timing
  r.judging_s = seconds_since(t);
  if (timing_wanted(op, passed) && !op.must_stop()) {
    op.run.progress(op.folder.op, "timing", all.size(), all.size());
    // Every draw ahead done before the device is taken, so that nothing runs beside the timed
    // calls; what is left of them counts as the timing's (it would have drawn them itself).
    t = Clock::now();
    if (op.timing_draws_ahead) op.timing_draws_ahead->finish();
    const double draws_left_s = seconds_since(t);
    t = Clock::now();
    std::unique_lock<DeviceLock> alone;
    if (shared) {
      shared.unlock();
      alone = std::unique_lock<DeviceLock>(*op.run.options.device_lock);
    }
    const loader::RunnerPool::Quiet quiet(op.run.pool.get());  // no runner touches the device beside timed calls
    r.device_wait_s += seconds_since(t);
    t = Clock::now();
    time_samples(op, all, passed);
    unpoisoned_check(op, all, passed);
    r.timing_s = seconds_since(t) + draws_left_s;
  }
  op.timing_draws_ahead.reset();
  t = Clock::now();
  finish_runner(op);
  r.runner_end_s = seconds_since(t);
}

// The op's verdict from its failures and violations; a wrong op never contributes a speedup.
void decide_verdict(OpState& op) {
  shape_specialisation_by_size(op);
  harness::decide_verdict(op.result, op.policy);
}

OpResult evaluate_op(Run& run, const loader::OpFolder& folder) {
  auto t0 = Clock::now();
  OpState op(run, folder);
  evaluate_samples(op);
  if (!op.stopped.empty()) {
    // Stopped part-way (a service's cancel or task timeout): what was judged is not the op's
    // verdict, and nothing of it is reported as one.
    OpResult r = op_error(op.result.op, op.result.kind, "not judged: " + op.stopped + " (stopped inside the op)");
    r.eval_s = seconds_since(t0);
    return r;
  }
  op.result.eval_s = seconds_since(t0);
  decide_verdict(op);
  return op.result;
}

}  // namespace

// The builds of a submission's ops, run ahead of its runs on threads of their own, each holding one
// of the build slots. A build ahead puts its artifact in the cache, and its toolchain baseline in
// the process's baselines when the artifact has static findings to judge; the op's own build step
// then finds both. Its result is discarded: the op's build step records the op's.
class BuildsAhead {
 public:
  BuildsAhead(const Run& run, const std::vector<loader::OpFolder>& folders) {
    const EvalOptions& o = run.options;
    if (o.self_check || o.repro || (o.jobs <= 1 && !o.build_slots)) return;
    slots_ = o.build_slots ? o.build_slots : std::make_shared<BuildSlots>(o.jobs);
    const loader::BuildOptions bo = run.build_options();
    for (const loader::OpFolder& f : folders)
      ahead_[f.op] = std::async(std::launch::async, [this, f, bo, &run] { return build_ahead(f, bo, run); });
  }
  ~BuildsAhead() {
    for (auto& [op, done] : ahead_)
      if (done.valid()) loader::remove_uncached(done.get().value_or(loader::BuildResult{}));  // never taken
  }
  BuildsAhead(const BuildsAhead&) = delete;
  BuildsAhead& operator=(const BuildsAhead&) = delete;

  // `op`'s build ahead (waits for it); nullopt when it has none or it threw.
  std::optional<loader::BuildResult> take(const std::string& op) {
    auto it = ahead_.find(op);
    if (it == ahead_.end() || !it->second.valid()) return std::nullopt;
    return it->second.get();
  }

 private:
  std::optional<loader::BuildResult> build_ahead(const loader::OpFolder& f, const loader::BuildOptions& bo, const Run& run) {
    struct Slot {
      BuildSlots& s;
      explicit Slot(BuildSlots& slots) : s(slots) { s.acquire(); }
      ~Slot() { s.release(); }
    } slot(*slots_);
    std::optional<loader::BuildResult> built;
    try {
      built = loader::build(f, bo);
    } catch (const std::exception&) {
      return std::nullopt;  // the op's own build step meets the same problem and records it
    }
    try {
      if (built->ok && f.kind != loader::Kind::Nvrtc && f.kind != loader::Kind::Python) {
        policy::ArtifactInfo info = policy::read_artifact(built->artifact);
        std::string why;
        if (!policy::inspect_artifact(info, run.policy, f.op).empty()) toolchain_baseline(f, bo, &why);
      }
    } catch (const std::exception&) {
      // The inspect step reads the artifact again and records what is wrong with it.
    }
    return built;
  }

  std::shared_ptr<BuildSlots> slots_;
  std::map<std::string, std::future<std::optional<loader::BuildResult>>> ahead_;
};

}  // namespace evaluation

namespace {

// Which ops --self-check runs without --suite: the smoke suite's (each judged on smoke), not every
// op of every suite the default could reach.
std::string self_check_suite(const std::string& suite) { return suite == kAutoSuite ? "smoke" : suite; }

// The op folders to evaluate: the submission's (the suite's ops under --self-check), only the
// wanted ones; a wanted op without a folder is an error result of its own.
std::vector<loader::OpFolder> op_folders(const EvalOptions& options, Report& rep) {
  loader::ScanResult scan;
  if (options.self_check) {
    for (const auto& op : options.repro ? std::vector<std::string>{options.repro->op} : suite_ops(self_check_suite(options.suite))) {
      loader::OpFolder f;
      f.op = op;
      f.folder = loader::folder_for_op(op);
      scan.ops.push_back(f);
    }
  } else {
    scan = loader::scan_submission(options.submission);
  }
  rep.problems = scan.problems;
  std::vector<std::string> wanted = options.ops;
  if (options.repro) wanted = {options.repro->op};
  std::vector<loader::OpFolder> folders;
  for (const auto& f : scan.ops)
    if (wanted.empty() || std::find(wanted.begin(), wanted.end(), f.op) != wanted.end()) folders.push_back(f);
  for (const auto& want : wanted) {
    bool found = std::any_of(folders.begin(), folders.end(), [&](const loader::OpFolder& f) { return f.op == want; });
    if (!found)
      rep.ops.push_back(op_error(want, "",
                                 options.self_check ? "suite '" + options.suite + "' has no samples for " + want
                                                    : "the submission has no folder " + loader::folder_for_op(want)));
  }
  return folders;
}

Report report_header(const EvalOptions& options, const policy::Policy& policy) {
  Report rep;
  rep.version = KG_VERSION_STRING;
  rep.torch_version = TORCH_VERSION;
  rep.device = names::device_name(options.device);
  rep.suite = options.repro ? "repro" : options.suite;
  rep.policy = policy.name;
  rep.submission = options.submission;
  if (options.device == names::Device::Cuda && !at::hasCUDA())
    throw std::runtime_error("--device cuda: the linked libtorch has no CUDA, or no GPU is visible");
  if (!options.repro) suite_samples(options.suite, "");  // unknown suite: a configuration error, before any build
  rep.seed_given = options.seed_given;
  rep.seed = options.seed_given ? options.seed : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  return rep;
}

}  // namespace

const char* version() { return KG_VERSION_STRING; }

void decide_verdict(OpResult& r, const policy::Policy& policy) {
  for (const auto& f : r.failures)
    for (const auto& t : trait_list(f.traits)) r.failure_traits[t]++;
  bool rejected = false;
  for (const auto& v : r.violations) rejected |= policy.action_for(v.rule) == policy::Action::Reject;
  if (!r.error.empty()) r.verdict = policy::Verdict::Error;
  else if (rejected) r.verdict = policy::Verdict::Rejected;
  else if (!r.failures.empty() || r.passed < r.total) r.verdict = policy::Verdict::Fail;
  else r.verdict = policy::Verdict::Pass;
  if (r.verdict != policy::Verdict::Pass) r.speedup.reset();
}

loader::RunnerOptions runner_options(const EvalOptions& options, const policy::Policy& policy, const std::string& artifact) {
  return evaluation::runner_options(options, policy, artifact);
}

loader::BuildOptions build_options(const policy::Policy& policy, const std::string& work_dir, const std::string& submission_root) {
  loader::BuildOptions bo;
  bo.work_dir = work_dir;
  bo.submission_root = submission_root;
  bo.time_s = policy.compile_time_s;
  bo.memory_mb = static_cast<uint64_t>(policy.compile_memory_mb);
  bo.cache_artifact_max_bytes = static_cast<uint64_t>(policy.cache_artifact_mb) << 20;
  return bo;
}

bool inspect_inline_extension(OpResult& result, const std::string& artifact, loader::Kind kind, const loader::BuildOptions& options,
                              const policy::Policy& policy) {
  result.inspected = true;
  try {
    std::string why;
    const auto findings = evaluation::findings_beyond_baseline(
        artifact, policy, result.op, [&](std::string* w) { return inline_extension_baseline(kind, options, w); }, &why);
    if (!findings) {
      result.error = "kernelgate's toolchain baseline (its own " + std::string(loader::kind_name(kind)) +
                     " load_inline stub) is unavailable, so the extension's static findings cannot be judged: " + why;
      return false;
    }
    const std::string shown = fs::path(artifact).filename().string();  // the host's cache folders are not evidence
    for (const auto& f : *findings) {
      std::string evidence = f.evidence;
      for (size_t at; (at = evidence.find(artifact)) != std::string::npos;) evidence.replace(at, artifact.size(), shown);
      violation(result, f.rule, "load_inline's library " + evidence);
    }
  } catch (const std::exception& e) {
    violation(result, policy::Rule::ProtocolViolation, std::string("a load_inline library cannot be read as a shared object: ") + e.what());
  }
  return true;
}

bool runner_pool_serves(const loader::RunnerPool& pool, const EvalOptions& options, const policy::Policy& policy) {
  return pool.serves(evaluation::runner_options(options, policy, ""));
}

void prepare_process(names::Device device) {
  process_peaks(device);
  if (device == names::Device::Cuda) at::empty({1}, at::TensorOptions().device(at::kCUDA)).fill_(1).sum().item<float>();
}

names::Device auto_device() { return at::hasCUDA() ? names::Device::Cuda : names::Device::Cpu; }

const std::vector<double>& sweep_tolerances() {
  static const std::vector<double> v = {1e-5, 1e-3, 1e-2};
  return v;
}

std::shared_ptr<loader::RunnerPool> make_runner_pool(const EvalOptions& options, const policy::Policy& policy,
                                                     const std::string& staging_root, size_t ready, size_t max_ahead) {
  std::error_code ec;
  fs::create_directories(staging_root, ec);
  if (ec) throw std::runtime_error(staging_root + ": cannot create: " + ec.message());
  loader::RunnerPool::Options po;
  po.runner = evaluation::runner_options(options, policy, "");
  po.runner.staging_root = staging_root;
  po.device = options.device;
  po.ready = ready;
  po.max_ahead = max_ahead;
  return std::make_shared<loader::RunnerPool>(po);
}

namespace {

// An evaluation without a pool given keeps one runner ready, the first started while the ops
// build: as many ahead as it has ops, and one for eager when it times with an eager runner of its
// own (a runner more only after a crash, started then). One started ahead and never taken is a
// CUDA context set up and torn down for nothing, and on a GPU those are what bound a batch's rate.
std::shared_ptr<loader::RunnerPool> own_runner_pool(const EvalOptions& options, const policy::Policy& policy, const fs::path& work,
                                                    size_t ops) {
  if (ops == 0) return nullptr;
  const bool own_eager = options.timing && !options.eager_runner;
  return make_runner_pool(options, policy, (work / "runners").string(), 1, ops + (own_eager ? 1 : 0));
}

}  // namespace

Report evaluate(const EvalOptions& options, const policy::Policy& policy) {
  auto t0 = evaluation::Clock::now();
  Report rep = report_header(options, policy);
  std::vector<loader::OpFolder> folders = op_folders(options, rep);
  fs::path work = fs::absolute(options.out_dir) / "build";
  std::error_code ec;
  fs::create_directories(work, ec);
  if (ec) throw std::runtime_error(work.string() + ": cannot create: " + ec.message());
  evaluation::Run run{options,
                      policy,
                      rep.seed,
                      work.string(),
                      options.timing ? process_peaks(options.device) : DevicePeaks{},
                      options.eager_runner ? options.eager_runner : make_eager_runner(),
                      options.no_runner_pool ? nullptr
                      : options.runner_pool  ? options.runner_pool
                                             : own_runner_pool(options, policy, work, folders.size()),
                      {}};
  if (options.on_op_decided)
    for (const OpResult& missing : rep.ops) options.on_op_decided(missing);  // wanted ops without a folder
  run.ops_total = folders.size();
  if (run.pool && options.runner_pool_exclusive) run.pool->bound_ahead(folders.size() + (options.timing && !options.eager_runner ? 1 : 0));
  evaluation::BuildsAhead ahead(run, folders);
  run.built_ahead = [&ahead](const std::string& op) { return ahead.take(op); };
  std::string stopped;
  for (const auto& f : folders) {
    if (stopped.empty() && options.stop_reason) stopped = options.stop_reason();
    if (!stopped.empty()) {
      rep.ops.push_back(op_error(f.op, loader::kind_name(f.kind), "not judged: " + stopped));
      if (options.on_op_decided) options.on_op_decided(rep.ops.back());
      continue;
    }
    if (options.verbose) std::cerr << "kernelgate: evaluating " << f.op << "\n";
    run.progress(f.op, "build");
    try {
      rep.ops.push_back(evaluation::evaluate_op(run, f));
    } catch (const std::exception& e) {
      // A failure of kernelgate itself for one op never loses the other ops' results.
      rep.ops.push_back(op_error(f.op, loader::kind_name(f.kind), std::string("internal error: ") + e.what()));
    }
    run.ops_done++;
    run.progress(f.op, "decided");
    if (options.on_op_decided) options.on_op_decided(rep.ops.back());
  }
  run.progress("", "decided");
  if (!options.eager_runner) finish_eager_runner(*run.eager_slot);  // a shared one outlives this evaluation
  rep.wall_s = evaluation::seconds_since(t0);
  return rep;
}

}  // namespace kg::harness

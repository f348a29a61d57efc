// Evaluating a submission: build each op folder, run its samples in a sandboxed runner, judge
// every call against the libtorch reference, time the passing ops against eager.
#include "kernelgate/harness.h"
#include "kernelgate/loader.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>

namespace fs = std::filesystem;

namespace kg::harness {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Per-sample generator: the run's seed, the op and the sample index, mixed.
std::mt19937_64 sample_rng(uint64_t seed, const std::string& op, size_t index) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : op) h = (h ^ c) * 1099511628211ULL;
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(h),
                    static_cast<uint32_t>(h >> 32), static_cast<uint32_t>(index)};
  return std::mt19937_64(seq);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int64_t input_numel(const std::vector<c10::IValue>& inputs) {
  int64_t n = 0;
  for (const auto& v : inputs)
    if (v.isTensor() && v.toTensor().defined()) n += v.toTensor().numel();
  return n;
}

Failure failure_for(const Sample& s, const std::vector<c10::IValue>& inputs, const std::string& category, const std::string& message) {
  Failure f;
  f.category = category;
  f.sample = trace::format_call(s.call);
  f.label = s.label;
  f.family = family_name(s.family);
  f.traits = input_traits(s, inputs);
  f.message = message;
  return f;
}

// Maps a dead runner's record to a failure category (and a violation when the sandbox caught one).
std::string category_for_death(const loader::CallOutcome& out) {
  if (out.kind == loader::CallOutcome::Kind::Timeout) return "timeout";
  switch (out.record.status) {
    case sandbox::Status::TO: return "timeout";
    case sandbox::Status::ML: return "memory_limit";
    default: return "crash";
  }
}

struct OpContext {
  const EvalOptions& options;
  const policy::Policy& policy;
  const loader::OpFolder& folder;
  const c10::FunctionSchema& schema;
  std::string artifact;
  std::unique_ptr<loader::RunnerClient> runner;
  std::string registered;

  std::string start_runner() {
    loader::RunnerOptions ro;
    ro.runner_path = options.runner_path.empty() ? loader::default_runner_path() : options.runner_path;
    if (!artifact.empty()) ro.ro_binds = {fs::path(artifact).parent_path().string()};
    ro.profile = sandbox::Profile::RunCpu;
    ro.limits.cpu_s = std::max(60.0, policy.run_call_time_s * 10);
    ro.limits.wall_s = std::max(120.0, policy.run_call_time_s * 20);
    ro.limits.memory_mb = static_cast<uint64_t>(policy.run_memory_mb);
    ro.limits.max_processes = 64;
    try {
      runner = loader::RunnerClient::start(ro);
    } catch (const std::exception& e) {
      return e.what();
    }
    return runner->load(artifact, registered, folder.op);
  }
};

void time_op(OpContext& ctx, OpResult& r, const Sample& sample, const std::vector<c10::IValue>& inputs,
             const std::vector<c10::IValue>& ref_returns, const std::vector<c10::IValue>& ref_args_after, double one_call_s) {
  const auto& pol = ctx.policy;
  int reps = pol.timing_min_reps;
  if (one_call_s > 0) reps = static_cast<int>(std::ceil(pol.timing_min_seconds / one_call_s));
  reps = std::clamp(reps, pol.timing_min_reps, pol.timing_max_reps);
  const size_t n_returns = ctx.schema.returns().size();
  loader::CallOutcome out = ctx.runner->call(inputs, n_returns, pol.run_call_time_s * (reps + pol.timing_warmup + 1),
                                             pol.timing_warmup, reps);
  if (out.kind != loader::CallOutcome::Kind::Ok || out.times_s.empty()) return;
  // The outputs of the timed calls are judged too: a kernel must not be right only when untimed.
  auto mism = judge_call(ctx.schema, inputs, ref_returns, ref_args_after, out.returns, out.args_after, pol, r.op);
  if (!mism.empty()) {
    Failure f = failure_for(sample, inputs, mism.front().category, "wrong during timed calls: " + mism.front().detail);
    f.mismatch = mism.front();
    r.failures.push_back(f);
    return;
  }
  // Eager, the same loop: a fresh exact copy of the inputs per call, outside the timed region.
  auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(ctx.schema.name().c_str(), ctx.schema.overload_name().c_str());
  c10::InferenceMode guard;
  std::vector<double> eager;
  for (int i = 0; i < pol.timing_warmup + reps; ++i) {
    std::vector<c10::IValue> args = loader::clone_values(inputs);
    c10::Stack stack(args.begin(), args.end());
    auto t0 = Clock::now();
    handle.callBoxed(&stack);
    double t = seconds_since(t0);
    if (i >= pol.timing_warmup) eager.push_back(t);
  }
  Timing t;
  t.candidate_median_s = median(out.times_s);
  t.eager_median_s = median(eager);
  t.reps = reps;
  t.sample = trace::format_call(sample.call);
  r.timing = t;
  if (t.candidate_median_s > 0) r.speedup = t.eager_median_s / t.candidate_median_s;
}

OpResult evaluate_op(const EvalOptions& options, const policy::Policy& policy, const loader::OpFolder& folder, uint64_t seed,
                     const std::string& work_dir) {
  auto t0 = Clock::now();
  OpResult r;
  r.op = folder.op;
  r.kind = loader::kind_name(folder.kind);
  auto finish = [&]() -> OpResult {
    r.eval_s = seconds_since(t0);
    for (const auto& f : r.failures)
      for (const auto& name : {"special_values", "broadcasting", "non_contiguous", "dtype", "large_sizes", "empty_or_0d"}) {
        std::string traits = trait_names(f.traits);
        if (("," + traits + ",").find(std::string(",") + name + ",") != std::string::npos) r.failure_traits[name]++;
      }
    bool rejected = false;
    for (const auto& v : r.violations) rejected |= policy.action_for(v.rule) == policy::Action::Reject;
    if (!r.error.empty()) r.verdict = "error";
    else if (rejected) r.verdict = "rejected";
    else if (!r.failures.empty() || r.passed < r.total) r.verdict = "fail";
    else r.verdict = "pass";
    if (r.verdict != "pass") r.speedup.reset();  // a wrong op never contributes a speedup
    return r;
  };

  const c10::FunctionSchema* schema = nullptr;
  try {
    schema = &loader::aten_schema(folder.op);
  } catch (const std::exception& e) {
    r.error = e.what();
    return finish();
  }
  std::vector<Sample> samples = suite_samples(options.suite, folder.op);
  if (samples.empty()) {
    r.error = "suite '" + options.suite + "' has no samples for " + folder.op;
    return finish();
  }
  r.total = static_cast<int>(samples.size());

  std::string artifact;  // stays empty in self-check: the runner calls the aten overload itself
  if (!options.self_check) {
    loader::BuildOptions bo;
    bo.work_dir = work_dir;
    bo.submission_root = options.submission;
    bo.time_s = policy.compile_time_s;
    bo.memory_mb = static_cast<uint64_t>(policy.compile_memory_mb);
    loader::BuildResult built = loader::build(folder, bo);
    r.build_s = built.seconds;
    r.build_log = built.log.substr(0, 8000);
    if (!built.ok) {
      if (built.record.status == sandbox::Status::XX && !built.record.message.empty()) {
        r.error = "build sandbox failed: " + built.record.message;
        return finish();
      }
      Failure f;
      f.category = "compile_error";
      f.message = built.error;
      r.failures.push_back(f);
      return finish();
    }
    artifact = built.artifact;
  }
  OpContext ctx{options, policy, folder, *schema, artifact, nullptr, std::string(loader::kRegistryNamespace) + "::" + folder.folder};
  std::string err = ctx.start_runner();
  if (!err.empty()) {
    Failure f;
    f.category = "runtime_error";
    f.message = "loading the artifact failed: " + err;
    r.failures.push_back(f);
    return finish();
  }

  const size_t n_returns = schema->returns().size();
  int best = -1;
  int64_t best_numel = -1;
  std::vector<c10::IValue> best_inputs, best_ref_returns, best_ref_args;
  double best_call_s = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    std::mt19937_64 rng = sample_rng(seed, folder.op, i);
    std::vector<c10::IValue> inputs;
    std::vector<c10::IValue> ref_args, ref_returns;
    try {
      inputs = make_inputs(*schema, s, rng);
    } catch (const std::exception& e) {
      r.error = "sample " + std::to_string(i) + " (" + trace::format_call(s.call) + ") is unusable: " + e.what();
      return finish();
    }
    try {
      ref_args = loader::clone_values(inputs);
      ref_returns = call_reference(*schema, ref_args);
    } catch (const std::exception& e) {
      std::string why = e.what();
      r.skipped.push_back({trace::format_call(s.call), why.substr(0, why.find('\n'))});
      r.total--;
      continue;
    }
    if (!ctx.runner || !ctx.runner->alive()) {
      std::string e = ctx.start_runner();
      if (!e.empty()) {
        r.failures.push_back(failure_for(s, inputs, "runtime_error", "restarting the runner failed: " + e));
        continue;
      }
    }
    loader::CallOutcome out = ctx.runner->call(inputs, n_returns, policy.run_call_time_s);
    switch (out.kind) {
      case loader::CallOutcome::Kind::Ok: {
        auto mism = judge_call(*schema, inputs, ref_returns, ref_args, out.returns, out.args_after, policy, folder.op);
        if (mism.empty()) {
          r.passed++;
          int64_t n = input_numel(inputs);
          if (n > best_numel) {
            best = static_cast<int>(i);
            best_numel = n;
            best_inputs = inputs;
            best_ref_returns = ref_returns;
            best_ref_args = ref_args;
            best_call_s = out.supervisor_wall_s;
          }
        } else {
          Failure f = failure_for(s, inputs, mism.front().category, mism.front().detail);
          f.mismatch = mism.front();
          r.failures.push_back(f);
        }
        break;
      }
      case loader::CallOutcome::Kind::OpError:
        r.failures.push_back(failure_for(s, inputs, "runtime_error", out.message));
        break;
      case loader::CallOutcome::Kind::ProtocolViolation:
        r.violations.push_back({"protocol_violation", out.message});
        r.failures.push_back(failure_for(s, inputs, "crash", "runner killed after a protocol violation: " + out.message));
        break;
      case loader::CallOutcome::Kind::Died:
      case loader::CallOutcome::Kind::Timeout: {
        std::string msg = out.message;
        if (!out.record.message.empty()) msg += " [" + std::string(sandbox::status_name(out.record.status)) + ": " + out.record.message + "]";
        if (!out.record.stderr_text.empty()) msg += " stderr: " + out.record.stderr_text.substr(0, 1000);
        r.failures.push_back(failure_for(s, inputs, category_for_death(out), msg));
        if (out.record.status == sandbox::Status::SV)
          r.violations.push_back({"sandbox_violation", "syscall " + out.record.syscall + " denied: " + out.record.message});
        break;
      }
    }
  }
  if (options.timing && policy.timing && r.failures.empty() && best >= 0 && ctx.runner && ctx.runner->alive())
    time_op(ctx, r, samples[static_cast<size_t>(best)], best_inputs, best_ref_returns, best_ref_args, best_call_s);
  if (ctx.runner && ctx.runner->alive()) {
    sandbox::Record rec = ctx.runner->finish();
    if (rec.status == sandbox::Status::SV)
      r.violations.push_back({"sandbox_violation", "syscall " + rec.syscall + " denied: " + rec.message});
  }
  return finish();
}

}  // namespace

Report evaluate(const EvalOptions& options, const policy::Policy& policy) {
  auto t0 = Clock::now();
  Report rep;
  rep.version = KG_VERSION_STRING;
  rep.torch_version = TORCH_VERSION;
  rep.device = options.device;
  rep.suite = options.suite;
  rep.policy = policy.name;
  rep.submission = options.submission;
  if (options.device != "cpu") throw std::runtime_error("device '" + options.device + "' is not available in this build (cpu only)");
  suite_samples(options.suite, "");  // unknown suite: a configuration error, before any build
  rep.seed_given = options.seed_given;
  rep.seed = options.seed_given ? options.seed : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();

  loader::ScanResult scan;
  if (options.self_check) {
    for (const auto& op : suite_ops(options.suite)) {
      loader::OpFolder f;
      f.op = op;
      f.folder = loader::folder_for_op(op);
      scan.ops.push_back(f);
    }
  } else {
    scan = loader::scan_submission(options.submission);
  }
  rep.problems = scan.problems;
  std::vector<loader::OpFolder> folders;
  for (const auto& f : scan.ops)
    if (options.ops.empty() || std::find(options.ops.begin(), options.ops.end(), f.op) != options.ops.end()) folders.push_back(f);
  for (const auto& want : options.ops) {
    bool found = std::any_of(folders.begin(), folders.end(), [&](const loader::OpFolder& f) { return f.op == want; });
    if (!found) {
      OpResult r;
      r.op = want;
      r.verdict = "error";
      r.error = "the submission has no folder " + loader::folder_for_op(want);
      rep.ops.push_back(r);
    }
  }
  fs::path work = fs::absolute(options.out_dir) / "build";
  std::error_code ec;
  fs::create_directories(work, ec);
  if (ec) throw std::runtime_error(work.string() + ": cannot create: " + ec.message());
  for (const auto& f : folders) {
    if (options.verbose) std::cerr << "kernelgate: evaluating " << f.op << "\n";
    try {
      rep.ops.push_back(evaluate_op(options, policy, f, rep.seed, work.string()));
    } catch (const std::exception& e) {
      // A failure of kernelgate itself for one op never loses the other ops' results.
      OpResult r;
      r.op = f.op;
      r.kind = loader::kind_name(f.kind);
      r.verdict = "error";
      r.error = std::string("internal error: ") + e.what();
      rep.ops.push_back(r);
    }
  }
  rep.wall_s = seconds_since(t0);
  return rep;
}

}  // namespace kg::harness

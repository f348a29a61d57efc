// Evaluating a submission: build each op folder, run its samples in a sandboxed runner, judge
// every call against the libtorch reference, time the passing ops against eager run by a clean
// runner through the same loop, and bound every claimed time by the supervisor's clock and the
// device's roofline.
#include "aliasing.h"
#include "baseline.h"
#include "cheats.h"
#include "kernelgate/harness.h"
#include "kernelgate/loader.h"
#include "kernelgate/protocol.h"
#include "kernelgate/rules.h"
#include "kernelgate/wire.h"
#include "util.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>

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

policy::Policy with_uniform_tolerance(const policy::Policy& p, double tol) {
  policy::Policy q = p;
  for (auto& [dtype, t] : q.tolerances) t = {tol, tol};
  for (auto& [op, per_dtype] : q.op_tolerances)
    for (auto& [dtype, t] : per_dtype) t = {tol, tol};
  return q;
}

// Maps a dead runner's record to a failure category.
std::string category_for_death(const loader::CallOutcome& out) {
  if (out.kind == loader::CallOutcome::Kind::Timeout) return "timeout";
  switch (out.record.status) {
    case sandbox::Status::TO: return "timeout";
    case sandbox::Status::ML: return "memory_limit";
    default: return "crash";
  }
}

c10::IValue value_to_device(const c10::IValue& v, const at::Device& d) {
  if (v.isTensor()) return v.toTensor().defined() ? c10::IValue(v.toTensor().to(d)) : v;
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList()) out.push_back(t.to(d));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> out;
    for (const auto& e : v.toTupleRef().elements()) out.push_back(value_to_device(e, d));
    return c10::ivalue::Tuple::create(std::move(out));
  }
  if (v.isDevice()) return d;
  if (v.isList() && !v.isIntList() && !v.isDoubleList() && !v.isBoolList()) {
    auto l = v.toList();
    c10::impl::GenericList out(l.elementType());
    for (size_t i = 0; i < l.size(); ++i) out.push_back(value_to_device(l.get(i), d));
    return out;
  }
  return v;
}

std::vector<c10::IValue> to_device(const std::vector<c10::IValue>& vs, const at::Device& d) {
  std::vector<c10::IValue> out;
  for (const auto& v : vs) out.push_back(value_to_device(v, d));
  return out;
}

// One sample with everything needed to judge and time it again.
struct Judged {
  size_t index = 0;
  std::vector<c10::IValue> inputs, ref_returns, ref_args;
  std::vector<c10::IValue> returns;  // the candidate's, when it passed
  std::vector<int32_t> ref_alias;    // which argument each reference return shares storage with
  double call_s = 0;
};

// A wrong call, kept to be looked at again: its sample, and where in the trials it happened.
struct WrongCall : Judged {
  Sample sample;
  std::string context;
};

// State shared by all ops of one evaluation.
struct Run {
  const EvalOptions& options;
  const policy::Policy& policy;
  uint64_t seed;
  std::string work_dir;
  DevicePeaks peaks;
  std::unique_ptr<loader::RunnerClient> eager;  // a runner with no submission code: eager timing

  loader::RunnerOptions runner_options(const std::string& artifact) const {
    loader::RunnerOptions ro;
    ro.runner_path = options.runner_path.empty() ? loader::default_runner_path() : options.runner_path;
    if (!artifact.empty()) ro.ro_binds = {fs::path(artifact).parent_path().string()};
    ro.profile = options.device == "cuda" ? sandbox::Profile::RunCuda : sandbox::Profile::RunCpu;
    ro.limits.cpu_s = std::max(60.0, policy.run_call_time_s * 10);
    ro.limits.wall_s = std::max(120.0, policy.run_call_time_s * 20);
    ro.limits.memory_mb = static_cast<uint64_t>(policy.run_memory_mb);
    ro.limits.max_processes = 64;
    return ro;
  }

  loader::Device device() const { return options.device == "cuda" ? loader::Device::Cuda : loader::Device::Cpu; }

  // Starts a runner and loads `request` (an empty artifact: the aten overload itself). "" or the error.
  std::string start(std::unique_ptr<loader::RunnerClient>* runner, const loader::LoadRequest& request) const {
    try {
      *runner = loader::RunnerClient::start(runner_options(request.artifact));
    } catch (const std::exception& e) {
      return e.what();
    }
    return (*runner)->load(request);
  }

  loader::LoadRequest eager_request(const std::string& op) const {
    loader::LoadRequest r;
    r.aten_op = op;
    r.device = device();
    return r;
  }
};

class OpEvaluation {
 public:
  OpEvaluation(Run& run, const loader::OpFolder& folder) : run_(run), pol_(run.policy), folder_(folder) {
    r_.op = folder.op;
    r_.kind = loader::kind_name(folder.kind);
  }
  ~OpEvaluation() { loader::remove_uncached(uncached_); }
  OpEvaluation(const OpEvaluation&) = delete;
  OpEvaluation& operator=(const OpEvaluation&) = delete;

  OpResult evaluate() {
    auto t0 = Clock::now();
    evaluate_samples();
    r_.eval_s = seconds_since(t0);
    return finish();
  }

 private:
  Failure failure(const Sample& s, size_t index, const std::vector<c10::IValue>& inputs, const std::string& category,
                  const std::string& message) const {
    Failure f;
    f.category = category;
    f.sample = trace::format_call(s.call);
    f.index = static_cast<int>(index);
    f.label = s.label;
    f.family = family_name(s.family);
    f.traits = input_traits(s, inputs);
    f.message = message;
    return f;
  }

  std::vector<Sample> samples() const {
    if (run_.options.repro) return {run_.options.repro->sample};
    return suite_samples(run_.options.suite, folder_.op);
  }
  size_t rng_index(size_t i) const { return run_.options.repro ? static_cast<size_t>(run_.options.repro->index) : i; }

  bool build() {
    if (run_.options.self_check) return true;  // the runner calls the aten overload itself
    loader::BuildOptions bo;
    bo.work_dir = run_.work_dir;
    bo.submission_root = run_.options.submission;
    bo.time_s = pol_.compile_time_s;
    bo.memory_mb = static_cast<uint64_t>(pol_.compile_memory_mb);
    bo.cache_artifact_max_bytes = static_cast<uint64_t>(pol_.cache_artifact_mb) << 20;
    loader::BuildResult built = loader::build(folder_, bo);
    uncached_.uncached_dir = built.uncached_dir;
    r_.build_s = built.seconds;
    r_.build_cache_hit = built.cache_hit;
    r_.build_cache_rejected = built.cache_rejected;
    r_.build_notes = built.notes;
    r_.build_log = built.log.substr(0, 8000);
    if (built.ok) {
      artifact_ = built.artifact;
      request_ = loader::load_request(folder_, built, run_.device());
      inspect(built.artifact, bo);
      return true;
    }
    if (built.record.status == sandbox::Status::XX && !built.record.message.empty()) {
      r_.error = "build sandbox failed: " + built.record.message;
    } else {
      Failure f;
      f.category = "compile_error";
      f.message = built.error;
      r_.failures.push_back(f);
    }
    return false;
  }

  // Static rules on the artifact, read as hostile bytes (the supervisor never loads it).
  // A finding is kept only when the submission added it: what the op's stub built the same way
  // also has (header inlines, glue, runtime) is not the submission's doing.
  void inspect(const std::string& artifact, const loader::BuildOptions& bo) {
    if (folder_.kind == loader::Kind::Nvrtc) return;  // a cubin: no host code to inspect
    r_.inspected = true;
    try {
      policy::ArtifactInfo info = policy::read_artifact(artifact);
      std::vector<policy::Finding> findings = policy::inspect_artifact(info, pol_, folder_.op);
      if (!findings.empty()) {
        std::string why;
        if (auto base = toolchain_baseline(folder_, bo, &why)) {
          subtract_baseline(info, *base);
          findings = policy::inspect_artifact(info, pol_, folder_.op);
        } else {
          std::cerr << "kernelgate: warning: " << folder_.op << ": no toolchain baseline (" << why
                    << "); static findings are not filtered\n";
        }
      }
      for (const auto& f : findings) violation(f.rule, f.evidence);
    } catch (const std::exception& e) {
      violation("protocol_violation", std::string("the built artifact cannot be read as a shared object: ") + e.what());
    }
  }

  // What the runner saw around a call, turned into rules (the runner reports; we decide).
  void runner_evidence(const loader::CallOutcome& out, const std::string& sample) {
    struct Meaning {
      uint32_t bit;
      const char* rule;
      const char* what;
    };
    static const Meaning meanings[] = {
        {protocol::kEvidenceThreadsLeftRunning, "async_escape", "the call returned with threads it started still running"},
        {protocol::kEvidenceDeviceBusyAfterCall, "async_escape", "the timed stream still had work once the call's end event completed"},
        {protocol::kEvidenceWorkOutsideTimedRegion, "async_escape",
         "a call queued work on a stream of its own that ran outside the call's start and stop events (before the start: "
         "beside the runner's own input copies and cache flush, before its inputs were there; after the stop: the call's "
         "stream did not wait for it), so the call's events cover none of it"},
        {protocol::kEvidencePersistingL2Changed, "cache_tampering", "a call changed the persisting-L2 limit or access window"},
        {protocol::kEvidenceOutputsChangedAfterReturn, "async_escape",
         "the call's outputs (or arguments) changed after it had returned: work left running in the background"},
        {protocol::kEvidenceObserverOff, "fallback_to_torch", "the runner's dispatcher observer was removed or disabled during the call"},
        {protocol::kEvidencePoisonOff, "unwritten_output", "the runner's allocation poisoning was switched off during the call"},
        {protocol::kEvidenceUnwrittenBool, "unwritten_output",
         "a bool output held bytes other than 0 and 1 (the runner's allocation poison): never written"},
    };
    for (const Meaning& m : meanings)
      if (out.evidence & m.bit) violation(m.rule, sample + ": " + m.what);
    // A view op's result legitimately needs no device work.
    if ((out.evidence & protocol::kEvidenceNoDeviceWork) && !(schema_ && returns_only_views(*schema_)))
      violation("no_device_work", sample +
                                      ": the call returned elements on cuda:0, but its host code queued no device work (no kernel "
                                      "launch, memset or device-to-device copy through libcudart): computed on the host");
    std::string compute;
    for (const std::string& op : out.dispatched)
      if (!policy::dispatched_operator_allowed(op, folder_.op)) compute += (compute.empty() ? "" : ", ") + op;
    if (!compute.empty())
      violation("fallback_to_torch", sample + ": the kernel dispatched PyTorch compute operator(s) during its call: " + compute);
    else if (out.evidence & protocol::kEvidenceDispatchedOverflow)
      violation("fallback_to_torch", sample + ": the kernel dispatched more than " + std::to_string(protocol::kMaxDispatched) +
                                         " distinct PyTorch operators during its call (not all could be checked)");
  }

  loader::CallOptions call_options(const std::vector<c10::IValue>& ref_returns, int warmup = 0, int reps = 0) const {
    loader::CallOptions o;
    o.warmup = warmup;
    o.reps = reps;
    o.device = run_.device();
    if (folder_.kind == loader::Kind::Nvrtc) o.output_like = ref_returns;
    o.returns_bytes_hint = wire::encoded_size(ref_returns);  // room for outputs as large as the reference's
    return o;
  }

  void evaluate_samples() {
    try {
      schema_ = &loader::aten_schema(folder_.op);
    } catch (const std::exception& e) {
      r_.error = e.what();
      return;
    }
    const std::vector<Sample> all = samples();
    // Samples of the suite no tensor can be built for: the sample's fault, reported, never judged.
    if (!run_.options.repro)
      for (auto& entry : suite_unbuildable_samples(run_.options.suite, folder_.op)) r_.skipped.push_back(std::move(entry));
    if (all.empty()) {
      r_.error = "suite '" + run_.options.suite + "' has no samples for " + folder_.op;
      if (!r_.skipped.empty()) r_.error += " that can be built (see skipped)";
      return;
    }
    r_.total = static_cast<int>(all.size());
    if (!build()) return;
    if (folder_.kind != loader::Kind::Cpu && run_.device() == loader::Device::Cpu) {
      r_.error = std::string("built; not run: the ") + loader::kind_name(folder_.kind) +
                 " kind needs a GPU (evaluate with --device cuda on a machine that has one)";
      return;
    }
    if (run_.options.self_check) request_ = run_.eager_request(folder_.op);
    if (std::string err = run_.start(&runner_, request_); !err.empty()) {
      if (err.rfind(loader::kLoadProtocolViolation, 0) == 0) violation("protocol_violation", err);
      Failure f;
      f.category = "runtime_error";
      f.message = "loading the artifact failed: " + err;
      r_.failures.push_back(f);
      return;
    }
    r_.ran = true;
    r_.device_work_watched = folder_.kind == loader::Kind::Cuda && run_.device() == loader::Device::Cuda && !run_.options.self_check;
    std::vector<Judged> passed;
    for (size_t i = 0; i < all.size(); ++i) {
      auto j = judge_sample(all[i], i);
      if (j) passed.push_back(std::move(*j));
    }
    if (!run_.options.repro) run_trials(all, passed);
    if (run_.options.timing && pol_.timing && r_.failures.empty() && !passed.empty()) {
      time_samples(all, passed);
      unpoisoned_check(all, passed);
    }
    if (runner_ && runner_->alive()) {
      sandbox::Record rec = runner_->finish();
      if (rec.status == sandbox::Status::SV)
        r_.violations.push_back({"sandbox_violation", "syscall " + rec.syscall + " denied: " + rec.message});
      // kg-runner itself never writes to stdout: whatever is there came from the submission,
      // and text shaped like a result is an attempt at the result channel (B17).
      if (!rec.stdout_text.empty())
        violation("protocol_violation", "the kernel wrote " + std::to_string(rec.stdout_text.size()) +
                                            " bytes to the runner's stdout (never read as results): " + rec.stdout_text.substr(0, 200));
    }
  }

  // Runs one sample; returns it when it passed.
  std::optional<Judged> judge_sample(const Sample& s, size_t i) {
    std::mt19937_64 rng = sample_rng(run_.seed, folder_.op, rng_index(i));
    Judged j;
    j.index = i;
    try {
      j.inputs = make_inputs(*schema_, s, rng);
    } catch (const UnsatisfiableSample& e) {
      r_.skipped.push_back({trace::format_call(s.call), std::string("no valid inputs: ") + e.what()});
      r_.total--;
      return std::nullopt;
    } catch (const std::exception& e) {
      r_.error = "sample " + std::to_string(i) + " (" + trace::format_call(s.call) + ") is unusable: " + e.what();
      return std::nullopt;
    }
    try {
      reference(j);
    } catch (const std::exception& e) {
      std::string why = e.what();
      r_.skipped.push_back({trace::format_call(s.call), why.substr(0, why.find('\n'))});
      r_.total--;
      return std::nullopt;
    }
    if (!runner_ || !runner_->alive()) {
      if (std::string e = run_.start(&runner_, request_); !e.empty()) {
        if (e.rfind(loader::kLoadProtocolViolation, 0) == 0) violation("protocol_violation", e);
        r_.failures.push_back(failure(s, i, j.inputs, "runtime_error", "restarting the runner failed: " + e));
        return std::nullopt;
      }
    }
    loader::CallOutcome out = runner_->call(j.inputs, schema_->returns().size(), pol_.run_call_time_s, call_options(j.ref_returns));
    runner_evidence(out, trace::format_call(s.call));
    switch (out.kind) {
      case loader::CallOutcome::Kind::Ok: {
        auto mism = judge_call(*schema_, j.inputs, j.ref_returns, j.ref_args, out.returns, out.args_after, pol_, folder_.op);
        if (run_.options.tolerance_sweep)
          for (double tol : sweep_tolerances()) {
            auto at = judge_call(*schema_, j.inputs, j.ref_returns, j.ref_args, out.returns, out.args_after,
                                 with_uniform_tolerance(pol_, tol), folder_.op);
            r_.sweep_passed[fmt(tol)] += at.empty() ? 1 : 0;
          }
        remember(s, "s" + std::to_string(i), out.returns);
        if (mism.empty()) {
          if (auto wrong_alias = aliasing_mismatch(*schema_, out.return_alias, j.ref_alias)) {
            r_.failures.push_back(failure(s, i, j.inputs, "aliasing", *wrong_alias));
            return std::nullopt;
          }
          r_.passed++;
          max_pass_numel_ = std::max(max_pass_numel_, input_numel(j.inputs));
          j.call_s = out.supervisor_wall_s;
          j.returns = out.returns;
          return j;
        }
        if (!record_wrong(s, i, j, out, mism.front(), "")) repeat_unexplained(s, j, out);
        min_fail_numel_ = std::min(min_fail_numel_, input_numel(j.inputs));
        return std::nullopt;
      }
      case loader::CallOutcome::Kind::OpError:
        r_.failures.push_back(failure(s, i, j.inputs, "runtime_error", out.message));
        return std::nullopt;
      case loader::CallOutcome::Kind::ProtocolViolation:
        r_.violations.push_back({"protocol_violation", out.message});
        r_.failures.push_back(failure(s, i, j.inputs, "crash", "runner killed after a protocol violation: " + out.message));
        return std::nullopt;
      case loader::CallOutcome::Kind::Died:
      case loader::CallOutcome::Kind::Timeout: {
        std::string msg = out.message;
        if (!out.record.message.empty()) msg += " [" + std::string(sandbox::status_name(out.record.status)) + ": " + out.record.message + "]";
        if (!out.record.stderr_text.empty()) msg += " stderr: " + out.record.stderr_text.substr(0, 1000);
        r_.failures.push_back(failure(s, i, j.inputs, category_for_death(out), msg));
        if (out.record.status == sandbox::Status::SV)
          r_.violations.push_back({"sandbox_violation", "syscall " + out.record.syscall + " denied: " + out.record.message});
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  // The reference on the evaluation device, brought back to the CPU for judging.
  void reference(Judged& j) const {
    j.ref_args = loader::clone_values(j.inputs);
    if (run_.device() == loader::Device::Cpu) {
      j.ref_returns = call_reference(*schema_, j.ref_args);
      j.ref_alias = loader::return_aliases(j.ref_returns, j.ref_args);
      return;
    }
    std::vector<c10::IValue> on_device = to_device(j.ref_args, at::Device(at::kCUDA, 0));
    std::vector<c10::IValue> returns = call_reference(*schema_, on_device);
    j.ref_alias = loader::return_aliases(returns, on_device);
    j.ref_returns = to_device(returns, at::Device(at::kCPU));
    j.ref_args = to_device(on_device, at::Device(at::kCPU));
  }

  // Keeps the candidate's recent outputs, to recognise replayed and never-written outputs later.
  // `inputs_key` names the input values (sample index and trial round): outputs of calls on the
  // same values are never evidence of replay.
  void remember(const Sample& s, const std::string& inputs_key, const std::vector<c10::IValue>& returns) {
    history_.push_back({inputs_key, s.label + " " + trace::format_call(s.call), returns});
    if (history_.size() > 16) history_.erase(history_.begin());
  }

  void violation(const std::string& rule, const std::string& evidence) {
    for (const auto& v : r_.violations)
      if (v.rule == rule) return;  // one of each rule per op is evidence enough
    r_.violations.push_back({rule, evidence});
  }

  // A wrong call: its failure, and the rules that explain how it is wrong. True when a rule
  // explained it.
  bool record_wrong(const Sample& s, size_t i, const Judged& j, const loader::CallOutcome& out, const Mismatch& m,
                    const std::string& context) {
    Failure f = failure(s, i, j.inputs, m.category, context + m.detail);
    f.mismatch = m;
    if (!first_wrong_) {
      first_wrong_ = WrongCall{j, s, context};
      first_wrong_->returns = out.returns;
    }
    r_.failures.push_back(f);
    bool explained = false;
    if (m.category == "input_mutated") {
      violation("input_mutated", f.sample + ": " + m.detail);
      explained = true;
    }
    // Poison left in the outputs explains the rest: a constant output of poison (or of bool
    // poison set to 1 by the runner) is an unwritten one, not a trivial or a replayed one.
    const double poisoned = poison_fraction(out.returns, j.ref_returns);
    if (poisoned >= 0.5) {
      violation("unwritten_output", f.sample + ": " + std::to_string(static_cast<int>(poisoned * 100)) +
                                        "% of the wrong elements still hold the runner's allocation poison (0x7fedbeef): never written");
      return true;
    }
    if (out.evidence & protocol::kEvidenceUnwrittenBool) return true;  // named by runner_evidence
    if (auto t = trivial_output_evidence(j.inputs, j.ref_returns, out.returns)) {
      violation("trivial_output", f.sample + ": " + *t);
      explained = true;
    }
    // Outputs left over from an earlier call: whole (replayed) or in part (never written).
    for (size_t h = 0; h + 1 < history_.size(); ++h) {
      const auto& [key, what, earlier] = history_[h];
      if (key == history_.back().inputs_key) continue;
      if (same_bytes_fraction(out.returns, earlier) == 1.0 && same_bytes_fraction(j.ref_returns, earlier) < 1.0) {
        violation("replayed_output", f.sample + " returned exactly the outputs of an earlier call on " + what);
        return true;
      }
      double stale = stale_fraction(out.returns, j.ref_returns, earlier);
      if (stale >= 0.5) {
        violation("unwritten_output", f.sample + ": " + std::to_string(static_cast<int>(stale * 100)) +
                                          "% of the wrong elements hold, bit for bit, the output of an earlier call on " + what +
                                          " at the same positions (never written)");
        return true;
      }
    }
    return explained;
  }

  // A wrong call once more on this runner, on identical inputs. A different answer means the
  // output depends on something that is not the input (uninitialised memory, a race: B9). True
  // when the repeat ran and gave no different answer.
  bool repeat_wrong_call(const Sample& s, const Judged& j, const std::vector<c10::IValue>& wrong_returns) {
    if (!runner_ || !runner_->alive()) return false;
    const std::string call = trace::format_call(s.call);
    loader::CallOutcome again = runner_->call(j.inputs, schema_->returns().size(), pol_.run_call_time_s, call_options(j.ref_returns));
    runner_evidence(again, call);
    if (again.kind != loader::CallOutcome::Kind::Ok) return false;
    const double same = same_bytes_fraction(again.returns, wrong_returns);
    if (same >= 0 && same < 1) {
      violation("nondeterministic_output", call + ": wrong, and an identical repeat on the same runner gave a different answer (" +
                                               std::to_string(static_cast<int>((1 - same) * 100 + 0.5)) + "% of the elements differ)");
      return false;
    }
    return true;
  }

  // A judged call no rule explained, repeated right away (the first two per op). Not left to
  // diagnose_wrong: this is the only repeat under --repro and with trials.correctness < 2
  // (backendbench, rl-reward), where the trials do not run, and it covers every unexplained
  // judged call, not only the first wrong one.
  void repeat_unexplained(const Sample& s, const Judged& j, const loader::CallOutcome& first) {
    if (repeats_left_ <= 0 || !runner_ || !runner_->alive()) return;
    --repeats_left_;
    repeat_wrong_call(s, j, first.returns);
  }

  // Correctness trials beyond the suite's one call per sample (THREATS.md B7, B8, B9, B14), all on
  // the op's runner: an identical repeat of a call it got right, then per trial round, for the
  // first passing samples, fresh inputs of the same shape (where the allocator most likely hands
  // out the addresses the previous call's inputs had) and a fingerprint twin of the judged inputs
  // (same first and last values, shapes and value multiset, other values moved), then the largest
  // passing sample scaled up. The first wrong call is looked at again on a fresh runner.
  void run_trials(const std::vector<Sample>& all, const std::vector<Judged>& passed) {
    if (pol_.correctness_trials < 2) return;
    if (!passed.empty()) repeat_right_call(all[passed.front().index], passed.front());
    if (r_.failures.empty()) fresh_rounds(all, passed);
    if (r_.failures.empty()) enlarged_trial(all, passed);
    if (first_wrong_) diagnose_wrong(*first_wrong_);
  }

  // Two identical repeats of a call it got right. Wrong the same way twice: the answer depends on
  // earlier calls (state). Two different answers: it depends on something that is not the input
  // at all (uninitialised memory, a race).
  void repeat_right_call(const Sample& s, const Judged& first) {
    std::vector<std::vector<c10::IValue>> outs;
    bool wrong = false, explained = false;
    std::string detail;
    for (int k = 0; k < 2; ++k) {
      if (!runner_ || !runner_->alive()) return;
      loader::CallOutcome out = runner_->call(first.inputs, schema_->returns().size(), pol_.run_call_time_s, call_options(first.ref_returns));
      runner_evidence(out, trace::format_call(s.call));
      if (out.kind != loader::CallOutcome::Kind::Ok) return;
      remember(s, "s" + std::to_string(first.index), out.returns);
      auto mism = judge_call(*schema_, first.inputs, first.ref_returns, first.ref_args, out.returns, out.args_after, pol_, folder_.op);
      if (!mism.empty()) {
        wrong = true;
        detail = mism.front().detail;
        explained |= record_wrong(s, first.index, first, out, mism.front(), "on an identical repeat of a call it got right: ");
      }
      outs.push_back(out.returns);
    }
    r_.repeated = true;
    if (wrong && !explained) {
      bool same = same_bytes_fraction(outs[0], outs[1]) == 1.0;
      violation(same ? "stateful_output" : "nondeterministic_output",
                trace::format_call(s.call) + ": right on its first call, " +
                    (same ? "wrong the same way on two identical repeats: " : "two identical repeats gave two different answers: ") + detail);
    }
  }

  void fresh_rounds(const std::vector<Sample>& all, const std::vector<Judged>& passed) {
    const size_t max_samples = 4;
    for (int round = 1; round < pol_.correctness_trials; ++round) {
      const std::string r = std::to_string(round);
      for (size_t k = 0; k < passed.size() && k < max_samples; ++k) {
        const Sample& s = all[passed[k].index];
        const size_t seed_index = rng_index(passed[k].index) + 100000 * static_cast<size_t>(round);
        std::mt19937_64 rng = sample_rng(run_.seed, folder_.op, seed_index);
        Judged j;
        j.index = passed[k].index;
        j.inputs = make_inputs(*schema_, s, rng);
        reference(j);
        const std::string key = "s" + std::to_string(j.index);
        if (call_trial(s, j, key + "r" + r, "on fresh inputs in trial round " + r + ": ", true) == Trial::Gone) return;
        std::mt19937_64 twin_rng = sample_rng(run_.seed, folder_.op, seed_index + 50000);
        std::optional<Judged> twin = fingerprint_twin_of(s, passed[k], twin_rng);
        if (twin && call_trial(s, *twin, key + "t" + r,
                               "on a fingerprint twin of its judged inputs (same first and last values, shapes and value "
                               "multiset; other values moved) in trial round " + r + ": ",
                               true) == Trial::Gone)
          return;
      }
      r_.trial_rounds = round;
    }
  }

  std::optional<Judged> fingerprint_twin_of(const Sample& s, const Judged& judged, std::mt19937_64& rng) const {
    Judged j;
    j.index = judged.index;
    try {
      std::optional<std::vector<c10::IValue>> inputs = fingerprint_twin(s, judged.inputs, rng);
      if (!inputs) return std::nullopt;
      j.inputs = std::move(*inputs);
      reference(j);
    } catch (const std::exception&) {
      return std::nullopt;  // the reference rejects the moved values: no twin for this op
    }
    return j;
  }

  // Shape specialisation (B14): the suite's samples are small, so the largest passing one is run
  // again with its sizes scaled up (x4, or x2 where x4 is too large). Wrong there and right on
  // every sample is what finish() calls shape_specialisation.
  void enlarged_trial(const std::vector<Sample>& all, const std::vector<Judged>& passed) {
    if (passed.empty()) return;
    const Judged& largest = *std::max_element(passed.begin(), passed.end(), [](const Judged& a, const Judged& b) {
      return input_numel(a.inputs) < input_numel(b.inputs);
    });
    const Sample& s = all[largest.index];
    const int64_t max_numel = int64_t{1} << 20;  // a few MB of inputs: one call, affordable for every kernel
    for (int64_t factor : {4, 2}) {
      std::optional<Sample> big = enlarged_sample(s, factor);
      if (!big || spec_numel(*big) > max_numel || spec_numel(*big) <= spec_numel(s)) continue;
      std::optional<Judged> drawn = draw_judged(*big, largest.index, rng_index(largest.index) + 300000);
      if (!drawn) continue;  // sizes tied to other arguments (views, splits): not scalable this way
      const Judged& j = *drawn;
      const std::string context = "on its largest sample with sizes x" + std::to_string(factor) + ": ";
      if (call_trial(*big, j, "s" + std::to_string(j.index) + "x" + std::to_string(factor), context, false) != Trial::Right)
        min_fail_numel_ = std::min(min_fail_numel_, input_numel(j.inputs));
      return;
    }
  }

  // The first wrong call of the op, from any phase and explained or not, looked at again after the
  // trials: once more on this runner, then as the first call of a fresh runner. The same wrong
  // answer here but the right one on a fresh runner: it depends on the calls this runner served
  // before (B8). Not merged with repeat_unexplained: this one needs the trials (the first wrong
  // call is often a trial's) and is the only one that can tell state from a wrong kernel.
  void diagnose_wrong(const WrongCall& w) {
    if (!repeat_wrong_call(w.sample, w, w.returns)) return;
    const std::string call = trace::format_call(w.sample.call);
    std::unique_ptr<loader::RunnerClient> fresh;
    if (!run_.start(&fresh, request_).empty()) return;
    loader::CallOutcome first = fresh->call(w.inputs, schema_->returns().size(), pol_.run_call_time_s, call_options(w.ref_returns));
    if (fresh->alive()) fresh->finish();
    if (first.kind != loader::CallOutcome::Kind::Ok) return;
    if (judge_call(*schema_, w.inputs, w.ref_returns, w.ref_args, first.returns, first.args_after, pol_, folder_.op).empty())
      violation("stateful_output", call + ": wrong" + (w.context.empty() ? "" : " " + w.context.substr(0, w.context.rfind(':'))) +
                                          ", the same wrong answer again on an identical repeat, yet right as the first call of a "
                                          "freshly started runner on identical inputs");
  }

  enum class Trial { Gone, Right, Wrong };

  // One trial call. A wrong answer no rule explains is stateful_output when `unexplained_is_state`
  // (the sample passed before on the same runner).
  Trial call_trial(const Sample& s, const Judged& j, const std::string& inputs_key, const std::string& context,
                   bool unexplained_is_state, bool poison = true) {
    if (!runner_ || !runner_->alive()) return Trial::Gone;
    loader::CallOptions options = call_options(j.ref_returns);
    options.poison = poison;
    loader::CallOutcome out = runner_->call(j.inputs, schema_->returns().size(), pol_.run_call_time_s, options);
    runner_evidence(out, trace::format_call(s.call));
    if (out.kind != loader::CallOutcome::Kind::Ok) {
      r_.failures.push_back(failure(s, j.index, j.inputs, out.kind == loader::CallOutcome::Kind::OpError ? "runtime_error" : "crash",
                                    context + out.message));
      return out.kind == loader::CallOutcome::Kind::OpError ? Trial::Wrong : Trial::Gone;
    }
    remember(s, inputs_key, out.returns);
    auto mism = judge_call(*schema_, j.inputs, j.ref_returns, j.ref_args, out.returns, out.args_after, pol_, folder_.op);
    if (mism.empty()) return Trial::Right;
    if (!record_wrong(s, j.index, j, out, mism.front(), context) && unexplained_is_state)
      violation("stateful_output", trace::format_call(s.call) + " passed on its first call and is wrong " + context + mism.front().detail);
    return Trial::Wrong;
  }

  // Fresh values for sample `s` (drawn from the run's seed at `seed_index`) with their reference;
  // nothing when they cannot be drawn or the reference rejects them.
  std::optional<Judged> draw_judged(const Sample& s, size_t index, size_t seed_index) const {
    std::mt19937_64 rng = sample_rng(run_.seed, folder_.op, seed_index);
    Judged j;
    j.index = index;
    try {
      j.inputs = make_inputs(*schema_, s, rng);
      reference(j);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    return j;
  }

  // After timing, one more judged call on the largest timed sample (fresh values) in the state
  // timed calls run in: no allocation poisoning, which is otherwise the one thing a kernel can read
  // to tell a judged call from a timed one (c10's junk-fill flag). A kernel that cheats only when
  // it thinks it is timed (hands the work to a thread, skips it) does so here, under the judged
  // call's after-return watch and comparison. CPU only: nothing is poisoned on cuda:0.
  void unpoisoned_check(const std::vector<Sample>& all, const std::vector<Judged>& timed) {
    if (timed.empty() || run_.device() != loader::Device::Cpu) return;
    const Judged& largest = timed.front();
    const Sample& s = all[largest.index];
    std::optional<Judged> j = draw_judged(s, largest.index, rng_index(largest.index) + 500000);
    if (!j) return;
    if (call_trial(s, *j, "s" + std::to_string(j->index) + "u", "on a judged call made without allocation poisoning, as timed calls are: ",
                   false, /*poison=*/false) == Trial::Wrong)
      violation("shape_specialisation", trace::format_call(s.call) +
                                            " is right on judged calls and wrong on one made in the state of a timed call (no allocation "
                                            "poisoning): the kernel reads the runner's state to tell evaluation from benchmarking");
  }

  // The timed call count: enough calls for the policy's min_seconds of measured time, from a short
  // probe (1 warm-up, 3 timed calls), within [min_reps, max_reps], and no more than about
  // 20 x min_seconds of the supervisor's wall clock per timed exchange (inputs are refreshed and
  // caches flushed before every call, which can cost more than the call).
  // -1 when the probe lost the runner (recorded as the timed calls' failure).
  int timed_reps(const Sample& s, const Judged& j, size_t n_returns, const std::string& sample) {
    int reps = pol_.timing_min_reps;
    const int probe_reps = 3;
    loader::CallOutcome probe =
        runner_->call(j.inputs, n_returns, pol_.run_call_time_s * (probe_reps + 2), call_options(j.ref_returns, 1, probe_reps));
    runner_evidence(probe, sample);
    if (probe.kind != loader::CallOutcome::Kind::Ok && !runner_->alive()) {
      timed_calls_failed(s, j, probe);
      return -1;
    }
    if (probe.kind != loader::CallOutcome::Kind::Ok || probe.times_s.empty()) return reps;
    const double median = quantile(probe.times_s, 0.5);
    const double wall_per_call = probe.supervisor_wall_s / (probe_reps + 1);
    if (median > 0) reps = static_cast<int>(std::min(1e7, std::ceil(pol_.timing_min_seconds / median)));
    if (wall_per_call > 0) reps = std::min(reps, static_cast<int>(std::min(1e7, 20 * pol_.timing_min_seconds / wall_per_call)));
    // One exchange carries at most kMaxTimedReps times (the audit profile's max_reps is higher).
    return std::min(std::clamp(reps, pol_.timing_min_reps, pol_.timing_max_reps), protocol::kMaxTimedReps);
  }

  // The candidate's timed calls did not complete. A runner that died names its signal or limit
  // and the phase; whoever killed it, the op is not timed and not passed (the supervisor cannot
  // tell an outside kill from the kernel's own).
  void timed_calls_failed(const Sample& s, const Judged& j, const loader::CallOutcome& out) {
    std::string category = out.kind == loader::CallOutcome::Kind::OpError ? "runtime_error" : category_for_death(out);
    std::string msg = "the timed calls failed: " + out.message;
    if (!out.record.stderr_text.empty()) msg += " stderr: " + out.record.stderr_text.substr(0, 1000);
    r_.failures.push_back(failure(s, j.index, j.inputs, category, msg));
    if (out.record.status == sandbox::Status::SV)
      r_.violations.push_back({"sandbox_violation", "syscall " + out.record.syscall + " denied: " + out.record.message});
  }

  int fresh_reps(int reps, int value_sets) const {
    return std::min(reps, std::max(pol_.timing_min_reps, value_sets - pol_.timing_warmup));
  }

  // Value sets the warm-up and timed calls rotate through besides the judged one: fresh draws of
  // the same sample (same shapes and layouts), each with its reference. Every call sees values no
  // call before it saw, so a kernel that memoises outputs by content (B7) gains nothing, and the
  // outputs of every set's last call are judged. Bounded by the policy's timing.rotation_mib over
  // all sets (the judged one included).
  std::vector<Judged> rotation_sets(const Sample& s, const Judged& j, int calls) {
    const size_t budget = static_cast<size_t>(pol_.timing_rotation_mib) << 20;
    const size_t bytes = std::max<size_t>(1, wire::encoded_size(j.inputs));
    const size_t want = std::min<size_t>({protocol::kMaxInputSets, static_cast<size_t>(std::max(calls, 1)), budget / bytes});
    std::vector<Judged> out;
    for (size_t k = 1; k < want; ++k) {
      std::optional<Judged> x = draw_judged(s, j.index, rng_index(j.index) + 400000 + k);
      if (!x) break;  // the sets drawn so far stay
      out.push_back(std::move(*x));
    }
    return out;
  }

  // Times the largest passing samples: candidate and eager through the same runner loop.
  void time_samples(const std::vector<Sample>& all, std::vector<Judged>& passed) {
    std::sort(passed.begin(), passed.end(), [](const Judged& a, const Judged& b) { return input_numel(a.inputs) > input_numel(b.inputs); });
    if (passed.size() > static_cast<size_t>(std::max(1, run_.options.timed_samples))) passed.resize(static_cast<size_t>(run_.options.timed_samples));
    double log_sum = 0;
    int timed = 0;
    for (const Judged& j : passed) {
      if (!runner_ || !runner_->alive()) {
        r_.timing_skipped = "the kernel's runner was not running when timing began";
        return;
      }
      const Sample& s = all[j.index];
      const size_t n_returns = schema_->returns().size();
      int reps = timed_reps(s, j, n_returns, trace::format_call(s.call));
      if (reps < 0) return;
      const std::vector<Judged> rotation = rotation_sets(s, j, reps + pol_.timing_warmup);
      // Only as many timed calls as there are fresh sets after the warm-up, but never fewer than
      // min_reps: only inputs over rotation_mib / (warmup + min_reps) revisit values.
      reps = fresh_reps(reps, 1 + static_cast<int>(rotation.size()));
      const double budget = pol_.run_call_time_s * (reps + pol_.timing_warmup + 1);
      loader::CallOptions co = call_options(j.ref_returns, pol_.timing_warmup, reps);
      for (const Judged& x : rotation) co.more_inputs.push_back(x.inputs);
      loader::CallOutcome cand = runner_->call(j.inputs, n_returns, budget, co);
      runner_evidence(cand, trace::format_call(s.call));
      if (cand.kind != loader::CallOutcome::Kind::Ok || cand.times_s.empty()) {
        timed_calls_failed(s, j, cand);
        return;
      }
      // A median under the roofline floor is impossible whatever the outputs hold (a kernel that
      // hands its work to another thread may also leave them unfinished): checked first.
      const double floor_s = roofline_floor_s(*schema_, j.inputs, j.ref_returns, run_.peaks);
      const double median_s = quantile(cand.times_s, 0.5);
      if (median_s < floor_s)
        violation("impossible_speed", "median " + fmt(median_s) + " s over " + std::to_string(cand.times_s.size()) + " timed calls on " +
                                          trace::format_call(s.call) + " is under the roofline floor of " + fmt(floor_s) + " s");
      // The outputs of the timed calls are judged too: a kernel must not be right only when untimed.
      auto mism = judge_call(*schema_, j.inputs, j.ref_returns, j.ref_args, cand.returns, cand.args_after, pol_, folder_.op);
      std::optional<size_t> wrong_set;  // the rotated set that was wrong, when the judged one was right
      for (size_t k = 0; mism.empty() && k < rotation.size() && k < cand.more.size(); ++k) {
        mism = judge_call(*schema_, rotation[k].inputs, rotation[k].ref_returns, rotation[k].ref_args, cand.more[k].returns,
                          cand.more[k].args_after, pol_, folder_.op);
        if (!mism.empty()) wrong_set = k;
      }
      if (!mism.empty()) {
        // Right when judged, wrong when timed: the kernel tells evaluation from benchmarking.
        loader::CallOutcome shown = cand;
        if (wrong_set) {
          shown.returns = cand.more[*wrong_set].returns;
          shown.args_after = cand.more[*wrong_set].args_after;
        }
        record_wrong(s, j.index, wrong_set ? rotation[*wrong_set] : j, shown, mism.front(), "wrong during the timed calls: ");
        violation("shape_specialisation", trace::format_call(s.call) + " is right on its judged call and wrong during the timed calls: " +
                                              mism.front().detail);
        return;
      }
      // The runner reports, the supervisor bounds: claimed times must fit in the supervisor's
      // own clock around the exchange.
      double claimed = 0;
      for (double t : cand.times_s) claimed += t;
      if (claimed > cand.supervisor_wall_s) {
        r_.violations.push_back({"protocol_violation", "runner claims " + fmt(claimed) + " s of timed calls in an exchange the supervisor measured at " +
                                                           fmt(cand.supervisor_wall_s) + " s"});
        return;
      }
      // The eager side is kernelgate's own: when it fails, the op keeps its verdict and has no
      // speedup, with the reason.
      const std::string untimed = "timing stopped at " + trace::format_call(s.call) + ": the eager reference's runner ";
      if (!run_.eager || !run_.eager->alive()) {
        if (std::string e = run_.start(&run_.eager, run_.eager_request(folder_.op)); !e.empty()) {
          r_.timing_skipped = untimed + "could not start: " + e;
          return;
        }
      } else if (std::string e = run_.eager->load(run_.eager_request(folder_.op)); !e.empty()) {
        r_.timing_skipped = untimed + "could not load the aten overload: " + e;
        return;
      }
      loader::CallOptions eo = co;
      eo.output_like.clear();
      loader::CallOutcome eager = run_.eager->call(j.inputs, n_returns, budget * 4, eo);
      if (eager.kind != loader::CallOutcome::Kind::Ok || eager.times_s.empty()) {
        r_.timing_skipped = untimed + "failed: " + eager.message;
        return;
      }
      if (auto e = escaped_work_evidence(cand.idle_wait_s, eager.idle_wait_s, cand.times_s))
        violation("async_escape", trace::format_call(s.call) + ": " + *e);
      Timing t;
      t.sample = trace::format_call(s.call);
      t.reps = reps;
      t.value_sets = static_cast<int>(1 + rotation.size());
      t.candidate_median_s = median_s;
      t.candidate_iqr_s = quantile(cand.times_s, 0.75) - quantile(cand.times_s, 0.25);
      t.eager_median_s = quantile(eager.times_s, 0.5);
      t.eager_iqr_s = quantile(eager.times_s, 0.75) - quantile(eager.times_s, 0.25);
      t.floor_s = floor_s;
      t.speedup = t.candidate_median_s > 0 ? t.eager_median_s / t.candidate_median_s : 0;
      r_.timings.push_back(t);
      if (t.speedup > 0) {
        log_sum += std::log(t.speedup);
        timed++;
      }
    }
    if (timed > 0) r_.speedup = std::exp(log_sum / timed);
  }

  OpResult finish() {
    // Right on every small sample and wrong on every larger one: the kernel tells the shapes it
    // is judged on from the ones it is benchmarked on (B14).
    if (r_.passed >= 2 && min_fail_numel_ != std::numeric_limits<int64_t>::max() && min_fail_numel_ > max_pass_numel_)
      violation("shape_specialisation", "right on every sample up to " + std::to_string(max_pass_numel_) +
                                            " input elements, wrong on every sample from " + std::to_string(min_fail_numel_) + " up");
    for (const auto& f : r_.failures)
      for (const auto& t : trait_list(f.traits)) r_.failure_traits[t]++;
    bool rejected = false;
    for (const auto& v : r_.violations) rejected |= pol_.action_for(v.rule) == policy::Action::Reject;
    if (!r_.error.empty()) r_.verdict = "error";
    else if (rejected) r_.verdict = "rejected";
    else if (!r_.failures.empty() || r_.passed < r_.total) r_.verdict = "fail";
    else r_.verdict = "pass";
    if (r_.verdict != "pass") r_.speedup.reset();  // a wrong op never contributes a speedup
    return r_;
  }

  Run& run_;
  const policy::Policy& pol_;
  const loader::OpFolder& folder_;
  const c10::FunctionSchema* schema_ = nullptr;
  std::string artifact_;
  loader::BuildResult uncached_;  // only its uncached_dir: a build too large to cache, removed with this
  loader::LoadRequest request_;
  std::unique_ptr<loader::RunnerClient> runner_;
  struct Remembered {
    std::string inputs_key, what;
    std::vector<c10::IValue> returns;
  };
  std::vector<Remembered> history_;  // recent candidate outputs, the current call's last
  std::optional<WrongCall> first_wrong_;  // diagnosed after the trials
  int64_t max_pass_numel_ = 0;        // largest passing sample (input elements)
  int64_t min_fail_numel_ = std::numeric_limits<int64_t>::max();  // smallest wrong one
  int repeats_left_ = 2;              // repeats of unexplained wrong calls (nondeterminism)
  OpResult r_;
};

}  // namespace

std::string auto_device() { return at::hasCUDA() ? "cuda" : "cpu"; }

const std::vector<double>& sweep_tolerances() {
  static const std::vector<double> v = {1e-5, 1e-3, 1e-2};
  return v;
}

Report evaluate(const EvalOptions& options, const policy::Policy& policy) {
  auto t0 = Clock::now();
  Report rep;
  rep.version = KG_VERSION_STRING;
  rep.torch_version = TORCH_VERSION;
  rep.device = options.device;
  rep.suite = options.repro ? "repro" : options.suite;
  rep.policy = policy.name;
  rep.submission = options.submission;
  if (options.device == "cuda" && !at::hasCUDA())
    throw std::runtime_error("--device cuda: the linked libtorch has no CUDA, or no GPU is visible");
  if (options.device != "cpu" && options.device != "cuda") throw std::runtime_error("unknown device '" + options.device + "'");
  if (!options.repro) suite_samples(options.suite, "");  // unknown suite: a configuration error, before any build
  rep.seed_given = options.seed_given;
  rep.seed = options.seed_given ? options.seed : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();

  loader::ScanResult scan;
  if (options.self_check) {
    for (const auto& op : options.repro ? std::vector<std::string>{options.repro->op} : suite_ops(options.suite)) {
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
    if (!found) {
      OpResult r;
      r.op = want;
      r.verdict = "error";
      r.error = options.self_check ? "suite '" + options.suite + "' has no samples for " + want
                                   : "the submission has no folder " + loader::folder_for_op(want);
      rep.ops.push_back(r);
    }
  }
  fs::path work = fs::absolute(options.out_dir) / "build";
  std::error_code ec;
  fs::create_directories(work, ec);
  if (ec) throw std::runtime_error(work.string() + ": cannot create: " + ec.message());
  Run run{options, policy, rep.seed, work.string(), options.timing ? measure_peaks(options.device) : DevicePeaks{}, nullptr};
  for (const auto& f : folders) {
    if (options.verbose) std::cerr << "kernelgate: evaluating " << f.op << "\n";
    try {
      rep.ops.push_back(OpEvaluation(run, f).evaluate());
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
  if (run.eager && run.eager->alive()) run.eager->finish();
  rep.wall_s = seconds_since(t0);
  return rep;
}

}  // namespace kg::harness

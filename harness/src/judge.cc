// Judging: the reference for a sample's drawn inputs, one call of the candidate on them, and what
// came back classified: passed, wrong (with the rules that explain it), or failed (op error,
// protocol violation, a runner that died).
#include "aliasing.h"
#include "op_evaluation.h"
#include "util.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace kg::harness::evaluation {
namespace {

policy::Policy with_uniform_tolerance(const policy::Policy& p, double tol) {
  policy::Policy q = p;
  for (auto& [dtype, t] : q.tolerances) t = {tol, tol};
  for (auto& [op, per_dtype] : q.op_tolerances)
    for (auto& [dtype, t] : per_dtype) t = {tol, tol};
  return q;
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

// The sample's inputs and their reference; nothing when the sample is skipped (no valid inputs,
// a reference that rejects them) or unusable (recorded as the op's error).
std::optional<Judged> prepare_sample(OpState& op, const Sample& s, size_t i) {
  OpResult& r = op.result;
  std::mt19937_64 rng = sample_rng(op.run.seed, op.folder.op, op.rng_index(i));
  Judged j;
  j.index = i;
  try {
    j.inputs = make_inputs(*op.schema, s, rng);
  } catch (const UnsatisfiableSample& e) {
    r.skipped.push_back({trace::format_call(s.call), std::string("no valid inputs: ") + e.what()});
    r.total--;
    return std::nullopt;
  } catch (const std::exception& e) {
    r.error = "sample " + std::to_string(i) + " (" + trace::format_call(s.call) + ") is unusable: " + e.what();
    return std::nullopt;
  }
  try {
    reference(op, j);
  } catch (const std::exception& e) {
    std::string why = e.what();
    r.skipped.push_back({trace::format_call(s.call), why.substr(0, why.find('\n'))});
    r.total--;
    return std::nullopt;
  }
  return j;
}

// A runner for the next call: the op's, or a fresh one when it died. False (recorded) when none starts.
bool ensure_runner(OpState& op, const Sample& s, const Judged& j) {
  if (op.runner_alive()) return true;
  if (auto e = op.run.start(&op.runner, op.request)) {
    if (e->kind == loader::LoadError::Kind::ProtocolViolation) violation(op.result, policy::Rule::ProtocolViolation, e->message);
    op.result.failures.push_back(
        sample_failure(s, j.index, j.inputs, policy::Category::RuntimeError, "restarting the runner failed: " + e->message));
    return false;
  }
  return true;
}

// A call that completed: judged (and, with --tolerance-sweep, judged at every sweep tolerance).
std::optional<Judged> judge_completed(OpState& op, const Sample& s, Judged j, const loader::CallOutcome& out) {
  OpResult& r = op.result;
  const size_t i = j.index;
  auto mism = judge(op, j, out.returns, out.args_after);
  if (op.run.options.tolerance_sweep) {
    for (double tol : sweep_tolerances()) {
      auto at = judge_call(*op.schema, j.inputs, j.ref_returns, j.ref_args, out.returns, out.args_after,
                           with_uniform_tolerance(op.policy, tol), op.folder.op);
      r.sweep_passed[fmt(tol)] += at.empty() ? 1 : 0;
    }
    // Both ways: the policy's atol/rtol, and the context-aware tolerance (the policy's factor, or
    // kSweepContextFactor when it has none), so a reader sees which samples each would fail.
    const double factor = op.policy.context_factor > 0 ? op.policy.context_factor : kSweepContextFactor;
    auto by_tolerance = judge_call(*op.schema, j.inputs, j.ref_returns, j.ref_args, out.returns, out.args_after, op.policy, op.folder.op);
    r.sweep_passed["policy atol/rtol"] += by_tolerance.empty() ? 1 : 0;
    std::optional<ContextJudgement> c = judge_in_context(op, j, out.returns, by_tolerance, factor);
    r.sweep_passed["context x" + fmt(factor)] += (c ? c->mismatches.empty() : by_tolerance.empty()) ? 1 : 0;
  }
  remember(op, s, "s" + std::to_string(i), out.returns);
  if (mism.empty()) {
    if (auto wrong_alias = aliasing_mismatch(*op.schema, out.return_alias, j.ref_alias)) {
      r.failures.push_back(sample_failure(s, i, j.inputs, policy::Category::Aliasing, *wrong_alias));
      return std::nullopt;
    }
    r.passed++;
    op.history.max_pass_numel = std::max(op.history.max_pass_numel, input_numel(j.inputs));
    j.call_s = out.supervisor_wall_s;
    j.returns = out.returns;
    return j;
  }
  if (!record_wrong(op, s, i, j, out, mism.front(), "")) repeat_unexplained(op, s, j, out);
  op.history.min_fail_numel = std::min(op.history.min_fail_numel, input_numel(j.inputs));
  return std::nullopt;
}

// A call that did not complete: its failure (and the violation a protocol breach or a denied
// syscall is).
void record_failed_call(OpState& op, const Sample& s, const Judged& j, const loader::CallOutcome& out) {
  OpResult& r = op.result;
  switch (out.kind) {
    case loader::CallOutcome::Kind::Ok: return;
    case loader::CallOutcome::Kind::OpError:
      r.failures.push_back(sample_failure(s, j.index, j.inputs, policy::Category::RuntimeError, out.message));
      return;
    case loader::CallOutcome::Kind::ProtocolViolation:
      r.violations.push_back({policy::rule_id(policy::Rule::ProtocolViolation), out.message});
      r.failures.push_back(
          sample_failure(s, j.index, j.inputs, policy::Category::Crash, "runner killed after a protocol violation: " + out.message));
      return;
    case loader::CallOutcome::Kind::Died:
    case loader::CallOutcome::Kind::Timeout: {
      std::string msg = out.message;
      if (!out.record.message.empty()) msg += " [" + std::string(sandbox::status_name(out.record.status)) + ": " + out.record.message + "]";
      if (!out.record.stderr_text.empty()) msg += " stderr: " + out.record.stderr_text.substr(0, 1000);
      r.failures.push_back(sample_failure(s, j.index, j.inputs, category_for_death(out), msg));
      sandbox_violation(r, out.record);
      return;
    }
  }
}

}  // namespace

Failure sample_failure(const Sample& s, size_t index, const std::vector<c10::IValue>& inputs, policy::Category category,
                       const std::string& message) {
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

policy::Category category_for_death(const loader::CallOutcome& out) {
  if (out.kind == loader::CallOutcome::Kind::Timeout) return policy::Category::Timeout;
  switch (out.record.status) {
    case sandbox::Status::TO: return policy::Category::Timeout;
    case sandbox::Status::ML: return policy::Category::MemoryLimit;
    default: return policy::Category::Crash;
  }
}

void reference(const OpState& op, Judged& j) {
  if (op.run.device() == loader::Device::Cpu) {
    j.ref_args = loader::clone_values(j.inputs);  // the op may write its arguments; j.inputs stay as drawn
    j.ref_returns = call_reference(*op.schema, j.ref_args);
    j.ref_alias = loader::return_aliases(j.ref_returns, j.ref_args);
    return;
  }
  // On cuda:0 the copy to the device is the reference's own: the inputs need no clone, and only
  // the arguments the op writes come back (the judge compares the others with the inputs as
  // drawn; for the ladder's 2^22-element rung each skipped copy is 16 MB).
  const at::Device cuda(at::kCUDA, 0);
  std::vector<c10::IValue> on_device = to_device(j.inputs, cuda);
  std::vector<c10::IValue> returns = call_reference(*op.schema, on_device);
  j.ref_alias = loader::return_aliases(returns, on_device);
  j.ref_returns = to_device(returns, at::Device(at::kCPU));
  j.ref_args = j.inputs;
  const auto& args = op.schema->arguments();
  for (size_t k = 0; k < args.size() && k < on_device.size(); ++k)
    if (writes_argument(args[k])) j.ref_args[k] = value_to_device(on_device[k], at::Device(at::kCPU));
}

std::vector<c10::IValue> draw_inputs(const OpState& op, DrawsAhead* ahead, const Sample& s, size_t seed_index) {
  if (ahead)
    if (std::optional<std::vector<c10::IValue>> drawn = ahead->take(seed_index, s)) return std::move(*drawn);
  std::mt19937_64 rng = sample_rng(op.run.seed, op.folder.op, seed_index);
  return make_inputs(*op.schema, s, rng);
}

std::optional<Judged> draw_judged(const OpState& op, const Sample& s, size_t index, size_t seed_index) {
  Judged j;
  j.index = index;
  try {
    j.inputs = draw_inputs(op, op.timing_draws_ahead.get(), s, seed_index);
    reference(op, j);
  } catch (const std::exception&) { return std::nullopt; }
  return j;
}

std::vector<Mismatch> judge(const OpState& op, const Judged& j, const std::vector<c10::IValue>& returns,
                            const std::vector<c10::IValue>& args_after) {
  std::vector<Mismatch> mism = judge_call(*op.schema, j.inputs, j.ref_returns, j.ref_args, returns, args_after, op.policy, op.folder.op);
  if (op.policy.context_factor > 0)
    if (std::optional<ContextJudgement> c = judge_in_context(op, j, returns, mism, op.policy.context_factor)) return c->mismatches;
  // Wrong values only: judged again where the reference itself depends on its summation order
  // (it disagrees with the exact result rounded to its dtype), accepting either answer there.
  const bool values_only = std::all_of(mism.begin(), mism.end(), [](const Mismatch& m) {
    return m.category == policy::Category::ValueMismatch || m.category == policy::Category::NanMask ||
           m.category == policy::Category::InfMask;
  });
  if (mism.empty() || !values_only) return mism;
  std::optional<std::vector<c10::IValue>> exact = reference_f64(op, j.inputs);
  if (!exact) return mism;
  return judge_call_either(*op.schema, j.inputs, j.ref_returns, *exact, j.ref_args, returns, args_after, op.policy, op.folder.op);
}

std::optional<Judged> judge_sample(OpState& op, const Sample& s, size_t i) {
  std::optional<Judged> j = prepare_sample(op, s, i);
  if (!j || !ensure_runner(op, s, *j)) return std::nullopt;
  loader::CallOutcome out =
      op.runner->call(j->inputs, op.schema->returns().size(), op.policy.run_call_time_s, op.call_options(j->ref_returns));
  runner_evidence(op, out, trace::format_call(s.call));
  if (out.kind == loader::CallOutcome::Kind::Ok) return judge_completed(op, s, std::move(*j), out);
  record_failed_call(op, s, *j, out);
  return std::nullopt;
}

}  // namespace kg::harness::evaluation

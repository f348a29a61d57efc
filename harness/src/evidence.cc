// Evidence: what the runner reported around a call and what the candidate's outputs look like,
// turned into rule violations (the runner reports; the supervisor decides).
#include "cheats.h"
#include "op_evaluation.h"

#include "kernelgate/catalogue.h"
#include "kernelgate/evidence_rules.h"
#include "kernelgate/protocol.h"
#include "kernelgate/rules.h"

#include <algorithm>

namespace kg::harness {
namespace evaluation {
namespace {

// Outputs over this many elements are not kept for replay checks (memory), only named.
constexpr int64_t kMaxRememberedNumel = int64_t{1} << 22;

int64_t values_numel(const std::vector<c10::IValue>& values) {
  int64_t n = 0;
  for (const auto& v : values)
    if (v.isTensor() && v.toTensor().defined()) n += v.toTensor().numel();
    else if (v.isTuple()) n += values_numel(std::vector<c10::IValue>(v.toTupleRef().elements().begin(), v.toTupleRef().elements().end()));
  return n;
}

// Whether an earlier call was given the same values as the current one (its inputs' fingerprint
// `now`, its key the last remembered one): then equal outputs are no evidence of anything.
bool same_inputs(const CallHistory::Remembered& earlier, const CallHistory::Remembered& current, uint64_t now) {
  if (earlier.inputs_fingerprint) return *earlier.inputs_fingerprint == now;
  return earlier.inputs_key == current.inputs_key;
}

// Outputs left over from an earlier call on other values: whole (replayed) or in part (never
// written). A replay is reported only where `may_replay` (no honest mistake explains the call).
// True when the history explained the wrong call.
bool leftover_outputs(OpState& op, const std::string& sample, const Judged& j, const loader::CallOutcome& out, bool may_replay) {
  const auto& recent = op.history.recent;
  if (recent.empty()) return false;
  const uint64_t now = value_fingerprint(j.inputs);
  for (size_t h = 0; h + 1 < recent.size(); ++h) {
    const auto& earlier = recent[h];
    if (same_inputs(earlier, recent.back(), now)) continue;
    if (may_replay && replays_earlier_output(out.returns, j.ref_returns, earlier.returns)) {
      violation(op.result, policy::Rule::ReplayedOutput,
                sample + " returned exactly the outputs of an earlier call on other values, " + earlier.what +
                    ", which are not its answer");
      return true;
    }
    // A bool or small-integer element equals an earlier one by chance: only floating outputs.
    const double stale = all_floating(out.returns) ? stale_fraction(out.returns, j.ref_returns, earlier.returns) : -1;
    if (stale >= 0.5) {
      violation(op.result, policy::Rule::UnwrittenOutput,
                sample + ": " + std::to_string(static_cast<int>(stale * 100)) +
                    "% of the wrong elements hold, bit for bit, the output of an earlier call on " + earlier.what +
                    " at the same positions (never written)");
      return true;
    }
  }
  return false;
}

// A wrong call once more on identical inputs: whether it gave the very same outputs (what a
// constant or identity the candidate computes does; a race does not).
bool same_answer_again(OpState& op, const Sample& s, const Judged& j, const loader::CallOutcome& out) {
  if (!op.runner_alive()) return false;
  loader::CallOutcome again =
      op.runner->call(j.inputs, op.schema->returns().size(), op.policy.run_call_time_s, op.call_options(j.ref_returns));
  runner_evidence(op, again, trace::format_call(s.call));
  return again.kind == loader::CallOutcome::Kind::Ok && same_bytes_fraction(again.returns, out.returns) == 1.0;
}

bool has_violation(const OpResult& r, policy::Rule rule) {
  const std::string id = policy::rule_id(rule);
  return std::any_of(r.violations.begin(), r.violations.end(), [&](const Violation& v) { return v.rule == id; });
}

// B3/B4: a constant or an input returned, where the reference is not, and the same again on an
// identical repeat. True when it explained the call.
bool trivial_output(OpState& op, const Sample& s, const Judged& j, const loader::CallOutcome& out, const std::string& sample) {
  std::optional<std::string> t = trivial_output_evidence(j.inputs, j.ref_returns, out.returns);
  if (!t) return false;
  if (has_violation(op.result, policy::Rule::TrivialOutput)) return true;
  if (!same_answer_again(op, s, j, out)) return false;  // not what it reliably computes: left to the repeats
  violation(op.result, policy::Rule::TrivialOutput, sample + ": " + *t + ", again on an identical repeat");
  return true;
}

// Keeps the smallest unexplained wrong call larger than every passing one, for the size probe.
void keep_for_size_probe(OpState& op, const Sample& s, const Judged& j, const loader::CallOutcome& out, const std::string& context) {
  CallHistory& h = op.history;
  const int64_t n = input_numel(j.inputs);
  if (n <= h.max_pass_numel || (h.size_probe_subject && input_numel(h.size_probe_subject->inputs) <= n)) return;
  h.size_probe_subject = WrongCall{j, s, context};
  h.size_probe_subject->returns = out.returns;
}

}  // namespace

void runner_evidence(OpState& op, const loader::CallOutcome& out, const std::string& sample) {
  record_runner_evidence(op.result, out, op.folder.op, op.schema && returns_only_views(*op.schema), sample);
}

void remember(OpState& op, const Sample& s, const std::string& inputs_key, const std::vector<c10::IValue>& returns) {
  auto& recent = op.history.recent;
  recent.push_back({inputs_key, s.label + " " + trace::format_call(s.call),
                    values_numel(returns) <= kMaxRememberedNumel ? returns : std::vector<c10::IValue>{}, std::nullopt});
  if (recent.size() > 16) recent.erase(recent.begin());
}

void remember(OpState& op, const Sample& s, const std::vector<c10::IValue>& inputs, const std::vector<c10::IValue>& returns) {
  const uint64_t fingerprint = value_fingerprint(inputs);
  remember(op, s, "v" + std::to_string(fingerprint), returns);
  op.history.recent.back().inputs_fingerprint = fingerprint;
}

bool record_wrong(OpState& op, const Sample& s, size_t i, const Judged& j, const loader::CallOutcome& out, const Mismatch& m,
                  const std::string& context) {
  OpResult& r = op.result;
  Failure f = sample_failure(s, i, j.inputs, m.category, context + m.detail);
  f.mismatch = m;
  // An honest mistake (dtype, promotion, rounding) explains the call: no rule that reads the
  // outputs (trivial, replayed, shape) may fire on it; never-written outputs are still evidence.
  const std::optional<std::string> honest = honest_explanation(op, j, out.returns, m);
  if (honest) {
    f.message += "; diagnosis: " + *honest;
    f.diagnosis = *honest;
  }
  if (!op.history.first_wrong) {
    op.history.first_wrong = WrongCall{j, s, context};
    op.history.first_wrong->returns = out.returns;
  }
  r.failures.push_back(f);
  bool explained = false;
  if (m.category == policy::Category::InputMutated) {
    violation(r, policy::Rule::InputMutated, f.sample + ": " + m.detail);
    explained = true;
  }
  // Poison left in the outputs explains the rest: a constant output of poison (or of bool
  // poison set to 1 by the runner) is an unwritten one, not a trivial or a replayed one.
  const double poisoned = poison_fraction(out.returns, j.ref_returns);
  if (poisoned >= 0.5) {
    violation(r, policy::Rule::UnwrittenOutput,
              f.sample + ": " + std::to_string(static_cast<int>(poisoned * 100)) +
                  "% of the wrong elements still hold the runner's allocation poison (0x7fedbeef): never written");
    return true;
  }
  if (out.observations.has(policy::RunnerObservation::UnwrittenBool)) return true;  // named by runner_evidence
  if (honest) {
    leftover_outputs(op, f.sample, j, out, /*may_replay=*/false);
    return true;
  }
  if (trivial_output(op, s, j, out, f.sample)) explained = true;
  if (leftover_outputs(op, f.sample, j, out, /*may_replay=*/true)) return true;
  if (!explained) keep_for_size_probe(op, s, j, out, context);
  return explained;
}

void shape_specialisation_by_size(OpState& op) {
  if (!op.history.size_evidence.empty()) violation(op.result, policy::Rule::ShapeSpecialisation, op.history.size_evidence);
}

}  // namespace evaluation

void violation(OpResult& result, policy::Rule rule, const std::string& evidence) {
  const char* id = policy::rule_id(rule);
  for (const auto& v : result.violations)
    if (v.rule == id) return;  // one of each rule per op is evidence enough
  result.violations.push_back({id, evidence});
}

void sandbox_violation(OpResult& result, const sandbox::Record& record) {
  if (record.status == sandbox::Status::SV)
    result.violations.push_back(
        {policy::rule_id(policy::Rule::SandboxViolation), "syscall " + record.syscall + " denied: " + record.message});
}

void record_runner_evidence(OpResult& result, const loader::CallOutcome& out, const std::string& op, bool returns_only_views,
                            const std::string& sample) {
  std::string compute;  // the PyTorch compute operators the kernel dispatched, named
  for (const std::string& name : out.dispatched)
    if (!policy::dispatched_operator_allowed(name, op)) compute += (compute.empty() ? "" : ", ") + name;
  for (const policy::ObservationRule& meaning : policy::observation_rules()) {
    if (!meaning.rule || !out.observations.has(meaning.observation)) continue;
    if (meaning.unless == policy::Unless::OpReturnsOnlyViews && returns_only_views) continue;
    if (meaning.unless == policy::Unless::OperatorsNamed && !compute.empty()) continue;
    violation(result, *meaning.rule, sample + ": " + policy::observation_evidence(meaning, protocol::kMaxDispatched));
  }
  if (!compute.empty())
    violation(result, policy::Rule::FallbackToTorch,
              sample + ": the kernel dispatched PyTorch compute operator(s) during its call: " + compute);
  std::string opens;  // files outside the runtime's own that the sandbox refused (seen by the supervisor)
  for (const sandbox::RefusedOpen& o : out.refused_opens) opens += (opens.empty() ? "" : ", ") + o.syscall + " " + o.path;
  if (!opens.empty())
    violation(result, policy::Rule::SandboxViolation,
              sample + ": the kernel tried to open files after start-up, refused (EACCES) by the sandbox: " + opens);
}

}  // namespace kg::harness

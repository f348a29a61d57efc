// Evidence: what the runner reported around a call and what the candidate's outputs look like,
// turned into rule violations (the runner reports; the supervisor decides).
#include "cheats.h"
#include "op_evaluation.h"

#include "kernelgate/catalogue.h"
#include "kernelgate/evidence_rules.h"
#include "kernelgate/protocol.h"
#include "kernelgate/rules.h"

namespace kg::harness::evaluation {
namespace {

// Outputs left over from an earlier call: whole (replayed) or in part (never written). True when
// the history explained the wrong call.
bool leftover_outputs(OpState& op, const std::string& sample, const Judged& j, const loader::CallOutcome& out) {
  const auto& recent = op.history.recent;
  for (size_t h = 0; h + 1 < recent.size(); ++h) {
    const auto& [key, what, earlier] = recent[h];
    if (key == recent.back().inputs_key) continue;
    if (same_bytes_fraction(out.returns, earlier) == 1.0 && same_bytes_fraction(j.ref_returns, earlier) < 1.0) {
      violation(op.result, policy::Rule::ReplayedOutput, sample + " returned exactly the outputs of an earlier call on " + what);
      return true;
    }
    double stale = stale_fraction(out.returns, j.ref_returns, earlier);
    if (stale >= 0.5) {
      violation(op.result, policy::Rule::UnwrittenOutput,
                sample + ": " + std::to_string(static_cast<int>(stale * 100)) +
                    "% of the wrong elements hold, bit for bit, the output of an earlier call on " + what +
                    " at the same positions (never written)");
      return true;
    }
  }
  return false;
}

}  // namespace

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

void runner_evidence(OpState& op, const loader::CallOutcome& out, const std::string& sample) {
  std::string compute;  // the PyTorch compute operators the kernel dispatched, named
  for (const std::string& name : out.dispatched)
    if (!policy::dispatched_operator_allowed(name, op.folder.op)) compute += (compute.empty() ? "" : ", ") + name;
  for (const policy::ObservationRule& meaning : policy::observation_rules()) {
    if (!meaning.rule || !out.observations.has(meaning.observation)) continue;
    if (meaning.unless == policy::Unless::OpReturnsOnlyViews && op.schema && returns_only_views(*op.schema)) continue;
    if (meaning.unless == policy::Unless::OperatorsNamed && !compute.empty()) continue;
    violation(op.result, *meaning.rule, sample + ": " + policy::observation_evidence(meaning, protocol::kMaxDispatched));
  }
  if (!compute.empty())
    violation(op.result, policy::Rule::FallbackToTorch,
              sample + ": the kernel dispatched PyTorch compute operator(s) during its call: " + compute);
}

void remember(OpState& op, const Sample& s, const std::string& inputs_key, const std::vector<c10::IValue>& returns) {
  auto& recent = op.history.recent;
  recent.push_back({inputs_key, s.label + " " + trace::format_call(s.call), returns});
  if (recent.size() > 16) recent.erase(recent.begin());
}

bool record_wrong(OpState& op, const Sample& s, size_t i, const Judged& j, const loader::CallOutcome& out, const Mismatch& m,
                  const std::string& context) {
  OpResult& r = op.result;
  Failure f = sample_failure(s, i, j.inputs, m.category, context + m.detail);
  f.mismatch = m;
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
  if (auto t = trivial_output_evidence(j.inputs, j.ref_returns, out.returns)) {
    violation(r, policy::Rule::TrivialOutput, f.sample + ": " + *t);
    explained = true;
  }
  if (leftover_outputs(op, f.sample, j, out)) return true;
  return explained;
}

void shape_specialisation_by_size(OpState& op) {
  OpResult& r = op.result;
  const CallHistory& h = op.history;
  if (r.passed >= 2 && h.min_fail_numel != std::numeric_limits<int64_t>::max() && h.min_fail_numel > h.max_pass_numel)
    violation(r, policy::Rule::ShapeSpecialisation,
              "right on every sample up to " + std::to_string(h.max_pass_numel) + " input elements, wrong on every sample from " +
                  std::to_string(h.min_fail_numel) + " up");
}

}  // namespace kg::harness::evaluation

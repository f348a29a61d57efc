// Context-aware tolerance (policy [context_tolerance], docs/verdicts.md): a floating output is
// judged by its error against the op's float64 result, allowed up to a factor of eager's own error
// on the same sample. An ill-conditioned sample (eager itself far from the exact result) then does
// not fail an honest kernel that rounds differently, and a well-conditioned one does not let a
// biased kernel through under a loose atol/rtol.
#include "kernelgate/context_tolerance.h"

#include "cheats.h"
#include "op_evaluation.h"

#include <algorithm>
#include <cmath>

namespace kg::harness::evaluation {
namespace {

bool value_category(policy::Category c) {
  return c == policy::Category::ValueMismatch || c == policy::Category::NanMask || c == policy::Category::InfMask;
}

}  // namespace

std::optional<ContextJudgement> judge_in_context(const OpState& op, const Judged& j, const std::vector<c10::IValue>& returns,
                                                 const std::vector<Mismatch>& by_tolerance, double factor) {
  if (factor <= 0) return std::nullopt;
  // Wrong dtypes, shapes, aliasing or mutated inputs are failures whatever the values.
  if (!std::all_of(by_tolerance.begin(), by_tolerance.end(), [](const Mismatch& m) { return value_category(m.category); }))
    return std::nullopt;
  if (exact_values(j.ref_returns)) return std::nullopt;  // integer results: compared exactly
  std::optional<std::vector<c10::IValue>> exact = reference_f64(op, j.inputs);
  if (!exact) return std::nullopt;
  std::optional<ErrorVsTruth> cand = error_vs_truth(returns, *exact), eager = error_vs_truth(j.ref_returns, *exact);
  // Eager's own error must be a number: where eager overflowed and the exact result did not, its
  // error says nothing about what a kernel may be allowed.
  if (!cand || !eager || !std::isfinite(eager->max_abs)) return std::nullopt;
  ContextJudgement c;
  c.eager_error = eager->max_abs;
  c.candidate_error = cand->max_abs;
  c.allowed = std::max(factor * eager->max_abs, op.policy.context_floor * eager->floor);
  if (cand->max_abs <= c.allowed) return c;  // passes: no mismatch
  Mismatch m;
  if (!by_tolerance.empty()) m = by_tolerance.front();  // keeps the first mismatch's position and values
  m.category = policy::Category::ValueMismatch;
  if (m.where.empty()) m.where = "return 0";
  std::string ratio =
      eager->max_abs > 0 ? fmt(cand->max_abs / eager->max_abs) + "x eager's own (" + fmt(eager->max_abs) + ")" : "while eager's is exact";
  m.detail = "value_mismatch in " + m.where + ": largest error against the float64 result is " + fmt(cand->max_abs) + ", " + ratio +
             "; the context tolerance allows " + fmt(c.allowed) + " (" + fmt(factor) + "x eager's error, at least " +
             fmt(op.policy.context_floor) + " units of the dtype)" + (by_tolerance.empty() ? "" : "; by atol/rtol: " + m.detail);
  m.max_abs_err = std::max(m.max_abs_err, cand->max_abs);
  c.mismatches.push_back(std::move(m));
  return c;
}

}  // namespace kg::harness::evaluation

namespace kg::harness {

std::optional<OutputsInContext> judge_outputs_in_context(const std::vector<c10::IValue>& eager, const std::vector<c10::IValue>& candidate,
                                                         const std::vector<c10::IValue>& exact, double factor, double floor_units) {
  if (factor <= 0 || eager.size() != exact.size() || candidate.size() != exact.size() || exact_values(eager)) return std::nullopt;
  const std::optional<ErrorVsTruth> cand = error_vs_truth(candidate, exact), own = error_vs_truth(eager, exact);
  if (!cand || !own || !std::isfinite(own->max_abs)) return std::nullopt;
  OutputsInContext c;
  c.eager_error = own->max_abs;
  c.candidate_error = cand->max_abs;
  c.allowed = std::max(factor * own->max_abs, floor_units * own->floor);
  c.passes = std::isfinite(cand->max_abs) && cand->max_abs <= c.allowed;
  return c;
}

}  // namespace kg::harness

// The context-aware tolerance (docs/verdicts.md, policy [context_tolerance]) for outputs judged
// outside an op: a KernelBench pair, whose float64 truth is the problem's own Model run in
// float64.
#pragma once

#include <ATen/core/ivalue.h>

#include <optional>
#include <vector>

namespace kg::harness {

struct OutputsInContext {
  double candidate_error = 0, eager_error = 0, allowed = 0;
  bool passes = false;
};
// The candidate's largest error against `exact` (the float64 result), allowed up to `factor` times
// eager's own on the same inputs, or `floor_units` units of the outputs' dtype at the exact
// result's largest magnitude. Nothing when it does not apply: integer results, outputs that do not
// line up with `exact`, or an eager whose own error is not finite.
std::optional<OutputsInContext> judge_outputs_in_context(const std::vector<c10::IValue>& eager, const std::vector<c10::IValue>& candidate,
                                                         const std::vector<c10::IValue>& exact, double factor, double floor_units);

}  // namespace kg::harness

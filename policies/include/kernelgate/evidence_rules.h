// kernelgate policies: which rule each runner observation is evidence of, and the sentence that
// says so in the violation. The runner reports what it saw around a call; this table is the
// supervisor's decision about what that means. Torch-free.
#pragma once

#include "kernelgate/catalogue.h"
#include "kernelgate/runner_evidence.h"

#include <optional>
#include <string>
#include <vector>

namespace kg::policy {

// When an observation is not evidence of its rule after all.
enum class Unless {
  Never,
  OpReturnsOnlyViews,  // a view op's result legitimately needs no device work
  OperatorsNamed,      // the dispatched compute operators the reply names are the better evidence
};

struct ObservationRule {
  RunnerObservation observation;
  std::optional<Rule> rule;  // nothing: a note about the run, never a violation
  Unless unless;
  // What the observation means, as the violation's evidence says it after the sample's call.
  // "{max_dispatched}" stands for the most distinct operators one runner reply names.
  const char* evidence;
};

// One entry per observation, in the order a call's violations are recorded (one of each rule per
// op is kept, so the first entry of a rule gives its evidence).
const std::vector<ObservationRule>& observation_rules();

// The entry of `o`.
const ObservationRule& observation_rule(RunnerObservation o);

// `rule.evidence` with "{max_dispatched}" replaced by `max_dispatched`.
std::string observation_evidence(const ObservationRule& rule, unsigned max_dispatched);

}  // namespace kg::policy

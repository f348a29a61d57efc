// The reward block of a task's result: one score from the policy's [reward] formula and the
// components it was computed from (reward.cc). Torch-free.
#pragma once

#include "kernelgate/policy.h"

#include <nlohmann/json.hpp>

namespace kg::serve {

// `ops`: the per-op objects of results.json. Components: compiled (every op built), correct
// (every op passed), correct_fraction, speedup (geomean over the ops' speedups when every op
// passed and was timed, else null), rules (ids that fired, any op), verdict (the worst op verdict:
// rejected > error > fail > pass; "error" when there is no op).
nlohmann::json reward_of(const nlohmann::json& ops, const policy::Policy& policy);

}  // namespace kg::serve

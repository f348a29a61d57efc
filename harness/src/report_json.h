// JSON pieces shared by results.json (report.cc) and audit.json (audit.cc).
#pragma once

#include "kernelgate/harness.h"

#include <nlohmann/json.hpp>

namespace kg::harness {

// What was evaluated, with what and how: versions, device, suite, policy, submission, seed and
// the unusable folders (`problems`).
nlohmann::json report_identity_json(const Report& report);

}  // namespace kg::harness

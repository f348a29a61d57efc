// JSON pieces shared by results.json (report.cc) and audit.json (audit.cc).
#pragma once

#include "kernelgate/harness.h"

#include <nlohmann/json.hpp>

namespace kg::harness {

// What was evaluated, with what and how: versions, device, suite, policy, submission, seed and
// the unusable folders (`problems`).
nlohmann::json report_identity_json(const Report& report);

// The one serialiser of results.json and audit.json: every string value and key that is not valid
// UTF-8 is escaped (kg::text::utf8_escaped) and the document's "non_utf8_escaped" member lists
// them by JSON pointer; the dump itself replaces anything left, so it never throws on bytes.
std::string dump_document(nlohmann::json doc);

}  // namespace kg::harness

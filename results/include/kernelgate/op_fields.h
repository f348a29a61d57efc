// The fields of results.json's per-op objects that the summaries and the reward service read,
// checked once: a missing or mistyped field is an error naming the op and the field, never a
// silent zero. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kg::results {

using json = nlohmann::json;

struct OpFields {
  std::string op;
  std::string kind;
  std::string verdict;  // pass | fail | rejected | error
  long long tests_total = 0;
  long long tests_passed = 0;
  std::optional<double> speedup;                  // the op's speedup (geomean over its timed samples)
  size_t timed_samples = 0;                       // timing[] entries
  std::vector<double> sample_speedups;            // timing[].speedup, the finite positive ones
  std::vector<std::string> rules;                 // violations[].rule, in order
  std::map<std::string, int> failure_categories;  // failures[].category -> count
  std::optional<double> max_abs_err;              // over the failures' mismatch evidence
  std::optional<double> max_rel_err;
};

// Throws std::runtime_error "ops[I] (OP): FIELD: problem".
OpFields op_fields(const json& op, size_t index);
std::vector<OpFields> op_fields_of(const json& ops);

// A submission's verdict: pass only when it has ops and every one passed; otherwise the worst op
// verdict, rejected > error > fail; no ops at all is error.
std::string submission_verdict(const std::vector<OpFields>& ops);

// The rule ids of a submission's violations, each once, sorted.
std::vector<std::string> submission_rules(const std::vector<OpFields>& ops);

}  // namespace kg::results

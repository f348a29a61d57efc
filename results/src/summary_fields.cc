// Reading results.json's per-op objects for the summaries (summary_fields.h).
#include "summary_fields.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace kg::results {
namespace {

[[noreturn]] void bad(const json& op, size_t index, const std::string& field, const std::string& problem) {
  std::string name;
  if (op.is_object() && op.contains("op") && op["op"].is_string()) name = " (" + op["op"].get<std::string>() + ")";
  throw std::runtime_error("ops[" + std::to_string(index) + "]" + name + ": " + field + ": " + problem);
}

std::string string_field(const json& op, size_t index, const char* key, bool required) {
  if (!op.contains(key)) {
    if (required) bad(op, index, key, "missing");
    return "";
  }
  if (!op[key].is_string()) bad(op, index, key, "not a string");
  return op[key].get<std::string>();
}

long long count_field(const json& op, size_t index, const char* key) {
  const json& tests = op["tests"];
  const std::string field = std::string("tests.") + key;
  if (!tests.contains(key)) bad(op, index, field, "missing");
  if (!tests[key].is_number_integer() || tests[key].get<long long>() < 0) bad(op, index, field, "not a count");
  return tests[key].get<long long>();
}

std::optional<double> optional_number(const json& value, const json& op, size_t index, const std::string& field) {
  if (value.is_null()) return std::nullopt;
  if (!value.is_number()) bad(op, index, field, "neither a number nor null");
  return value.get<double>();
}

// An optional array member: absent is empty, anything but an array of objects is an error.
const json& object_array(const json& op, size_t index, const char* key) {
  static const json empty = json::array();
  if (!op.contains(key)) return empty;
  const json& a = op[key];
  if (!a.is_array()) bad(op, index, key, "not an array");
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].is_object()) bad(op, index, std::string(key) + "[" + std::to_string(i) + "]", "not an object");
  return a;
}

void keep_max(std::optional<double>& current, const json& value) {
  if (!value.is_number()) return;  // null: not finite
  const double v = value.get<double>();
  if (!current || v > *current) current = v;
}

void read_failures(const json& op, size_t index, OpFields& f) {
  const json& failures = object_array(op, index, "failures");
  for (size_t i = 0; i < failures.size(); ++i) {
    const json& failure = failures[i];
    if (!failure.contains("category") || !failure["category"].is_string())
      bad(op, index, "failures[" + std::to_string(i) + "].category", "missing or not a string");
    f.failure_categories[failure["category"].get<std::string>()]++;
    if (!failure.contains("evidence") || !failure["evidence"].is_object()) continue;
    const json& ev = failure["evidence"];
    if (ev.contains("max_abs_err")) keep_max(f.max_abs_err, ev["max_abs_err"]);
    if (ev.contains("max_rel_err")) keep_max(f.max_rel_err, ev["max_rel_err"]);
  }
}

}  // namespace

OpFields op_fields(const json& op, size_t index) {
  if (!op.is_object()) bad(op, index, "(the op)", "not an object");
  OpFields f;
  f.op = string_field(op, index, "op", true);
  f.kind = string_field(op, index, "kind", false);
  f.verdict = string_field(op, index, "verdict", true);
  if (!op.contains("tests") || !op["tests"].is_object()) bad(op, index, "tests", "missing or not an object");
  f.tests_total = count_field(op, index, "total");
  f.tests_passed = count_field(op, index, "passed");
  if (op.contains("speedup")) f.speedup = optional_number(op["speedup"], op, index, "speedup");
  const json& timing = object_array(op, index, "timing");
  f.timed_samples = timing.size();
  for (size_t i = 0; i < timing.size(); ++i) {
    if (!timing[i].contains("speedup")) continue;
    auto s = optional_number(timing[i]["speedup"], op, index, "timing[" + std::to_string(i) + "].speedup");
    if (s && *s > 0 && std::isfinite(*s)) f.sample_speedups.push_back(*s);
  }
  const json& violations = object_array(op, index, "violations");
  for (size_t i = 0; i < violations.size(); ++i) {
    if (!violations[i].contains("rule") || !violations[i]["rule"].is_string())
      bad(op, index, "violations[" + std::to_string(i) + "].rule", "missing or not a string");
    f.rules.push_back(violations[i]["rule"].get<std::string>());
  }
  read_failures(op, index, f);
  return f;
}

std::vector<OpFields> op_fields_of(const json& ops) {
  std::vector<OpFields> out;
  out.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) out.push_back(op_fields(ops[i], i));
  return out;
}

std::string submission_verdict(const std::vector<OpFields>& ops) {
  if (ops.empty()) return "error";
  auto rank = [](const std::string& v) { return v == "pass" ? 0 : v == "fail" ? 1 : v == "rejected" ? 3 : 2; };
  std::string worst = "pass";
  for (const OpFields& o : ops)
    if (rank(o.verdict) > rank(worst)) worst = rank(o.verdict) == 2 ? "error" : o.verdict;
  return worst;
}

std::vector<std::string> submission_rules(const std::vector<OpFields>& ops) {
  std::set<std::string> rules;
  for (const OpFields& o : ops) rules.insert(o.rules.begin(), o.rules.end());
  return {rules.begin(), rules.end()};
}

const json& ops_of(const json& results, const std::string& source) {
  if (!results.is_object()) throw std::runtime_error(source + ": not a JSON object");
  if (!results.contains("ops")) throw std::runtime_error(source + ": ops: missing");
  if (!results["ops"].is_array()) throw std::runtime_error(source + ": ops: not an array");
  return results["ops"];
}

std::vector<OpFields> entry_op_fields(const BatchEntry& entry) {
  const std::string source = entry.name + "/results.json";
  const json& ops = ops_of(entry.results, source);
  try {
    return op_fields_of(ops);
  } catch (const std::exception& e) { throw std::runtime_error(source + ": " + e.what()); }
}

}  // namespace kg::results

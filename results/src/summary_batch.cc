// OUT/summary.json of a batch: per submission and per op the verdict, tests, speedup and rules;
// totals over the batch; the run's identity. And the batch's exit status.
#include "kernelgate/results.h"
#include "summary_fields.h"

#include <string>
#include <vector>

namespace kg::results {
namespace {

json op_entry(const OpFields& o) {
  json categories = json::object();
  for (const auto& [category, n] : o.failure_categories) categories[category] = n;
  return {{"op", o.op},
          {"kind", o.kind},
          {"verdict", o.verdict},
          {"tests", {{"total", o.tests_total}, {"passed", o.tests_passed}}},
          {"speedup", o.speedup ? json(*o.speedup) : json(nullptr)},
          {"rules", o.rules},
          {"failure_categories", categories}};
}

json submission_entry(const BatchEntry& e) {
  const std::vector<OpFields> fields = entry_op_fields(e);
  json op_entries = json::array();
  for (const OpFields& o : fields) op_entries.push_back(op_entry(o));
  const json problems = e.results.contains("problems") ? e.results["problems"] : json::array();
  if (e.results.contains("submission") && !e.results["submission"].is_string())
    throw std::runtime_error(e.name + "/results.json: submission: not a string");
  return {{"name", e.name},
          {"submission", e.results.value("submission", std::string())},
          {"verdict", submission_verdict(fields)},
          {"ops", op_entries},
          {"problems", problems}};
}

}  // namespace

json batch_summary_json(const RunIdentity& id, const std::vector<BatchEntry>& entries) {
  json submissions = json::array();
  json all_ops = json::array();
  int submissions_passed = 0;
  for (const BatchEntry& e : entries) {
    json s = submission_entry(e);
    submissions_passed += s["verdict"] == "pass";
    submissions.push_back(std::move(s));
    for (const json& op : e.results["ops"]) all_ops.push_back(op);
  }
  // The totals are results.json's summary over every op of the batch; a batch's wall time is not
  // the sum of its submissions' (they overlap), so it is left out.
  json totals = summary_of_ops(all_ops, 0);
  totals.erase("wall_seconds");
  totals["submissions"] = entries.size();
  totals["submissions_passed"] = submissions_passed;
  return {{"kernelgate_summary", 1}, {"run", identity_json(id)}, {"submissions", submissions}, {"totals", totals}};
}

int batch_exit_code(const std::vector<BatchEntry>& entries) {
  if (entries.empty()) return 1;
  for (const BatchEntry& e : entries) {
    if (submission_verdict(entry_op_fields(e)) != "pass") return 1;
  }
  return 0;
}

}  // namespace kg::results

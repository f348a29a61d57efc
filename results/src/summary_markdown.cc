// OUT/summary.md: the batch for a reader: the run, one table row per submission, the ops that did
// not pass, and the totals. Every text from a submission is escaped so it stays inside its cell.
#include "kernelgate/results.h"
#include "summary_fields.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace kg::results {
namespace {

// One table cell: Markdown's active characters backslash-escaped (a name never becomes a link,
// emphasis, code or HTML), line breaks as <br>, other control characters as \xNN.
std::string cell(const std::string& s) {
  static const std::string kActive = "\\|`*_[]<>~#!";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') continue;  // CRLF: one break
    if (c == '\n' || c == '\r') {
      out += "<br>";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      if (kActive.find(static_cast<char>(c)) != std::string::npos) out += '\\';
      out += static_cast<char>(c);
    }
  }
  return out.empty() ? "-" : out;
}

std::string fixed2(std::optional<double> v, const char* suffix = "") {
  if (!v || !std::isfinite(*v)) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f%s", *v, suffix);
  return text;
}

std::string joined(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

void run_section(std::ostringstream& o, const RunIdentity& id) {
  o << "## Run\n\n| | |\n|---|---|\n";
  const json run = identity_json(id);
  for (auto it = run.begin(); it != run.end(); ++it) {
    const json& v = it.value();
    std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    if (it.key() == "ops") text = id.ops.empty() ? "every op" : joined(id.ops, ", ");
    if (it.key() == "shard") text = std::to_string(id.shard_index) + " of " + std::to_string(id.shard_count);
    o << "| " << cell(it.key()) << " | " << cell(text) << " |\n";
  }
}

std::optional<double> number_or_none(const json& v) { return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt; }

void submissions_section(std::ostringstream& o, const std::vector<BatchEntry>& entries) {
  o << "\n## Submissions\n\n| submission | verdict | ops passed | geomean speedup (correct ops) | rules |\n|---|---|---|---|---|\n";
  for (const BatchEntry& e : entries) {
    const std::vector<OpFields> ops = entry_op_fields(e);
    int passed = 0;
    for (const OpFields& op : ops) passed += op.verdict == "pass";
    const json summary = summary_of_ops(e.results["ops"], 0);
    o << "| " << cell(e.name) << " | " << submission_verdict(ops) << " | " << passed << "/" << ops.size() << " | "
      << fixed2(number_or_none(summary["geomean_speedup_correct_ops"]), "x") << " | " << cell(joined(submission_rules(ops), ", "))
      << " |\n";
  }
}

void failing_ops_section(std::ostringstream& o, const std::vector<BatchEntry>& entries) {
  std::ostringstream rows;
  for (const BatchEntry& e : entries) {
    for (const OpFields& op : entry_op_fields(e)) {
      if (op.verdict == "pass") continue;
      std::vector<std::string> categories;
      for (const auto& [category, n] : op.failure_categories) categories.push_back(category + " x" + std::to_string(n));
      rows << "| " << cell(e.name) << " | " << cell(op.op) << " | " << cell(op.kind) << " | " << cell(op.verdict) << " | "
           << op.tests_passed << "/" << op.tests_total << " | " << cell(joined(op.rules, ", ")) << " | " << cell(joined(categories, ", "))
           << " |\n";
    }
  }
  if (rows.str().empty()) return;
  o << "\n## Ops that did not pass\n\n| submission | op | kind | verdict | tests passed | rules | failures |\n|---|---|---|---|---|---|---|\n"
    << rows.str();
}

void totals_section(std::ostringstream& o, const json& totals) {
  o << "\n## Totals\n\n| | |\n|---|---|\n";
  for (const char* key :
       {"submissions", "submissions_passed", "ops", "passed", "failed", "rejected", "errors", "tests_total", "tests_passed"})
    o << "| " << cell(key) << " | " << totals[key].dump() << " |\n";
  o << "| fraction\\_ops\\_correct | " << fixed2(number_or_none(totals["fraction_ops_correct"])) << " |\n"
    << "| geomean\\_speedup\\_correct\\_ops | " << fixed2(number_or_none(totals["geomean_speedup_correct_ops"]), "x") << " |\n";
  for (auto it = totals["fast_p"].begin(); it != totals["fast_p"].end(); ++it)
    o << "| " << cell(it.key()) << " | " << fixed2(number_or_none(it.value())) << " |\n";
}

std::string summary_markdown(const char* title, const RunIdentity& id, const std::vector<BatchEntry>& entries) {
  std::ostringstream o;
  o << "# " << title << "\n\n";
  run_section(o, id);
  submissions_section(o, entries);
  failing_ops_section(o, entries);
  totals_section(o, batch_summary_json(id, entries)["totals"]);
  return o.str();
}

}  // namespace

std::string batch_summary_markdown(const RunIdentity& id, const std::vector<BatchEntry>& entries) {
  return summary_markdown("kernelgate batch summary", id, entries);
}

std::string submission_summary_markdown(const RunIdentity& id, const BatchEntry& entry) {
  return summary_markdown("kernelgate summary", id, {entry});
}

}  // namespace kg::results

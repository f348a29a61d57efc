// A batch's leaderboard: its submissions ranked by fraction of ops correct, then by geomean
// speedup over correct ops (none ranks last), then by name; every column sortable.
#include "html_text.h"
#include "report_html_parts.h"
#include "summary_fields.h"

#include <algorithm>
#include <numeric>

namespace kg::results::html {
namespace {

struct Standing {
  size_t entry = 0;  // index into the batch's entries: the submission's section is #sub-<entry>
  std::string verdict;
  std::vector<std::string> rules;
  json summary;
  double correct = 0;
  std::optional<double> geomean;
};

Standing standing_of(const std::vector<BatchEntry>& entries, size_t i) {
  Standing s;
  s.entry = i;
  const std::vector<OpFields> ops = entry_op_fields(entries[i]);
  s.verdict = submission_verdict(ops);
  s.rules = submission_rules(ops);
  s.summary = summary_of_ops(entries[i].results["ops"], 0);
  s.correct = s.summary["fraction_ops_correct"].get<double>();
  if (s.summary["geomean_speedup_correct_ops"].is_number()) s.geomean = s.summary["geomean_speedup_correct_ops"].get<double>();
  return s;
}

bool ranks_before(const Standing& a, const Standing& b, const std::vector<BatchEntry>& entries) {
  if (a.correct != b.correct) return a.correct > b.correct;
  if (a.geomean.has_value() != b.geomean.has_value()) return a.geomean.has_value();
  if (a.geomean && *a.geomean != *b.geomean) return *a.geomean > *b.geomean;
  return entries[a.entry].name < entries[b.entry].name;
}

}  // namespace

std::string leaderboard_section(const std::vector<BatchEntry>& entries) {
  if (entries.empty()) return "<p class=\"muted\">the batch holds no submissions</p>";
  std::vector<Standing> standings;
  for (size_t i = 0; i < entries.size(); ++i) standings.push_back(standing_of(entries, i));
  std::stable_sort(standings.begin(), standings.end(), [&](const Standing& a, const Standing& b) { return ranks_before(a, b, entries); });
  std::string html =
      "<table class=\"sortable leaderboard\"><thead><tr><th data-type=\"number\" class=\"num\">rank</th><th data-type=\"text\">submission</th>"
      "<th data-type=\"number\">verdict</th><th data-type=\"number\" class=\"num\">ops correct</th>"
      "<th data-type=\"number\" class=\"num\">tests passed</th><th data-type=\"number\" class=\"num\">geomean speedup</th>"
      "<th data-type=\"number\" class=\"num\">fast_1</th><th data-type=\"text\">rules</th></tr></thead><tbody>";
  for (size_t rank = 0; rank < standings.size(); ++rank) {
    const Standing& s = standings[rank];
    const json& sum = s.summary;
    const std::string rules = std::accumulate(s.rules.begin(), s.rules.end(), std::string(),
                                              [](const std::string& a, const std::string& b) { return a.empty() ? b : a + ", " + b; });
    const double fast_1 = sum["fast_p"]["fast_1"].get<double>();
    html += "<tr data-submission-row><td class=\"num\">" + std::to_string(rank + 1) + "</td><td><a href=\"#sub-" + std::to_string(s.entry) +
            "\">" + escape(entries[s.entry].name) + "</a></td>";
    html += "<td data-sort=\"" + std::to_string(verdict_rank(s.verdict)) + "\">" + verdict_badge(s.verdict) + "</td>";
    html += "<td class=\"num\" data-sort=\"" + number(s.correct, 6) + "\">" + field(sum, "passed") + " / " + field(sum, "ops") + " (" +
            percent(s.correct) + ")</td>";
    html += "<td class=\"num\" data-sort=\"" + number(sum["test_pass_rate"].get<double>(), 6) + "\">" + field(sum, "tests_passed") + " / " +
            field(sum, "tests_total") + "</td>";
    html += "<td class=\"num\" data-sort=\"" + (s.geomean ? number(*s.geomean, 8) : std::string()) + "\">" +
            speedup(sum["geomean_speedup_correct_ops"]) + "</td>";
    html += "<td class=\"num\" data-sort=\"" + number(fast_1, 6) + "\">" + percent(fast_1) + "</td>";
    html += "<td>" + escape(rules) + "</td></tr>";
  }
  return html + "</tbody></table>";
}

}  // namespace kg::results::html

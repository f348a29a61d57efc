// The per-op table: sortable by op, verdict, tests, speedup and failure count (the script sorts on
// data-sort where a cell's text is not its order); worst verdicts first when the page opens.
#include "html_text.h"
#include "report_html_parts.h"

namespace kg::results::html {

std::string op_table(const json& ops, const std::vector<OpFields>& fields, const std::string& id_prefix) {
  if (fields.empty()) return "<p class=\"muted\">no ops were evaluated</p>";
  std::string html =
      "<table class=\"sortable ops\"><thead><tr><th data-type=\"text\">op</th><th>kind</th>"
      "<th data-type=\"number\" data-initial-sort=\"descending\">verdict</th><th data-type=\"number\" class=\"num\">tests passed</th>"
      "<th data-type=\"number\" class=\"num\">speedup</th><th data-type=\"number\" class=\"num\">failures</th>"
      "<th>failure categories</th><th data-type=\"text\">rules</th></tr></thead><tbody>";
  for (size_t i = 0; i < fields.size(); ++i) {
    const OpFields& o = fields[i];
    const json& op = ops[i];
    const size_t failures = op.contains("failures") && op["failures"].is_array() ? op["failures"].size() : 0;
    std::string categories, rules;
    for (const auto& [category, n] : o.failure_categories)
      categories += (categories.empty() ? "" : ", ") + category + (n > 1 ? " ×" + std::to_string(n) : "");
    for (const std::string& rule : o.rules) rules += (rules.empty() ? "" : ", ") + rule;
    const double passed_fraction = o.tests_total ? static_cast<double>(o.tests_passed) / static_cast<double>(o.tests_total) : 0.0;
    html += "<tr data-op-row><td><a href=\"#" + id_prefix + "op-" + std::to_string(i) + "\"><code>" + escape(o.op) + "</code></a></td>";
    html += "<td>" + escape(o.kind) + "</td>";
    html += "<td data-sort=\"" + std::to_string(verdict_rank(o.verdict)) + "\">" + verdict_badge(o.verdict) + "</td>";
    html += "<td class=\"num\" data-sort=\"" + number(passed_fraction, 6) + "\">" + std::to_string(o.tests_passed) + " / " +
            std::to_string(o.tests_total) + "</td>";
    html += "<td class=\"num\" data-sort=\"" + (o.speedup ? number(*o.speedup, 8) : std::string()) + "\">" +
            (o.speedup ? number(*o.speedup) + "x" : "—") + "</td>";
    html += "<td class=\"num\">" + std::to_string(failures) + "</td>";
    html += "<td>" + escape(categories) + "</td><td>" + escape(rules) + "</td></tr>";
  }
  return html + "</tbody></table>";
}

}  // namespace kg::results::html

// The audit's findings (audit.json): whether the submission is clean, then per rule its action,
// the threats it answers, what was checked, and per op its status with the evidence or the note.
#include "html_text.h"
#include "report_html_parts.h"

#include <map>

namespace kg::results::html {
namespace {

std::string status_badge(const std::string& status) {
  const bool known = status == "found" || status == "nothing_found" || status == "partly_checked" || status == "not_checked";
  return "<span class=\"badge " + (known ? status : std::string("other")) + "\">" + escape(status) + "</span>";
}

std::string rule_details(const json& rule) {
  long long found = 0;
  for (const json& op : array_member(rule, "ops")) found += field(op, "status") == "found";
  std::string html = std::string("<details") + (found ? " open" : "") + "><summary><strong>" + escape(field(rule, "rule")) +
                     "</strong> — action " + escape(field(rule, "action")) + ", " + std::to_string(found) + " found</summary>";
  html += "<dl class=\"evidence\">";
  if (rule.contains("threats")) html += "<dt>threats</dt><dd>" + escape(field(rule, "threats")) + "</dd>";
  if (rule.contains("checked")) html += "<dt>checked</dt><dd>" + escape(field(rule, "checked")) + "</dd>";
  html += "</dl><ul>";
  for (const json& op : array_member(rule, "ops")) {
    html += "<li><code>" + escape(field(op, "op")) + "</code> " + status_badge(field(op, "status"));
    if (op.contains("note")) html += " <span class=\"muted\">" + escape(field(op, "note")) + "</span>";
    for (const json& e : array_member(op, "evidence")) html += "<pre>" + escape(plain(e)) + "</pre>";
    html += "</li>";
  }
  return html + "</ul></details>";
}

}  // namespace

std::string audit_section(const json& audit) {
  const bool clean = audit.value("clean", json()) == json(true);
  std::string html = "<p>" +
                     std::string(clean ? "<span class=\"badge pass\">clean</span> every op passed and no rule found anything"
                                       : "<span class=\"badge rejected\">not clean</span> something was found or failed") +
                     (audit.contains("date") ? " <span class=\"muted\">(" + escape(field(audit, "date")) + " UTC)</span>" : "") + "</p>";
  html +=
      "<table class=\"sortable audit\"><thead><tr><th data-type=\"text\">rule</th><th data-type=\"text\">action</th>"
      "<th data-type=\"number\" class=\"num\" data-initial-sort=\"descending\">found</th><th data-type=\"number\" class=\"num\">nothing found</th>"
      "<th data-type=\"number\" class=\"num\">partly checked</th><th data-type=\"number\" class=\"num\">not checked</th></tr></thead><tbody>";
  for (const json& rule : array_member(audit, "rules")) {
    std::map<std::string, long long> by_status;
    for (const json& op : array_member(rule, "ops")) by_status[field(op, "status")]++;
    html += "<tr><td>" + escape(field(rule, "rule")) + "</td><td>" + escape(field(rule, "action")) + "</td>";
    for (const char* status : {"found", "nothing_found", "partly_checked", "not_checked"})
      html += "<td class=\"num\">" + std::to_string(by_status[status]) + "</td>";
    html += "</tr>";
  }
  html += "</tbody></table><h3>Per rule</h3>";
  for (const json& rule : array_member(audit, "rules")) html += rule_details(rule);
  return html;
}

}  // namespace kg::results::html

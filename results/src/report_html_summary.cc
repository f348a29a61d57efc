// The top of a submission's report: what was run (submission, device, suite, policy, seed,
// versions), the folders that are not op folders, and the summary figures with the fast_p curve.
#include "html_text.h"
#include "report_html_parts.h"

namespace kg::results::html {
namespace {

std::string card(const std::string& value, const std::string& label) {
  return "<div class=\"card\"><div class=\"value\">" + escape(value) + "</div><div class=\"label\">" + escape(label) + "</div></div>";
}

double fraction_of(const json& summary, const char* key) {
  return summary.contains(key) && summary[key].is_number() ? summary[key].get<double>() : 0.0;
}

}  // namespace

std::string run_facts(const json& results) {
  static const std::pair<const char*, const char*> rows[] = {
      {"submission", "submission"},         {"device", "device"},         {"suite", "suite"}, {"policy", "policy"}, {"seed", "seed"},
      {"kernelgate_version", "kernelgate"}, {"torch_version", "libtorch"}};
  std::string html = "<table class=\"facts\">";
  for (const auto& [key, label] : rows)
    if (results.contains(key)) html += "<tr><th>" + std::string(label) + "</th><td>" + escape(field(results, key)) + "</td></tr>";
  if (results.contains("non_utf8_escaped"))
    html += "<tr><th>note</th><td>" + escape(field(results["non_utf8_escaped"], "note")) + "</td></tr>";
  return html + "</table>";
}

std::string problems_list(const json& results) {
  const json& problems = array_member(results, "problems");
  if (problems.empty()) return "";
  std::string html = "<h4>Folders that are not op folders</h4><ul>";
  for (const json& p : problems) html += "<li><code>" + escape(field(p, "folder")) + "</code>: " + escape(field(p, "problem")) + "</li>";
  return html + "</ul>";
}

std::string summary_section(const json& summary, const std::vector<OpFields>& ops) {
  const json& fast = summary.contains("fast_p") ? summary["fast_p"] : json::object();
  std::string html = "<div class=\"cards\">";
  html += card(percent(fraction_of(summary, "fraction_ops_correct")),
               "ops correct (" + field(summary, "passed") + " of " + field(summary, "ops") + ")");
  html += card(percent(fraction_of(summary, "test_pass_rate")),
               "tests passed (" + field(summary, "tests_passed") + " of " + field(summary, "tests_total") + ")");
  html += card(speedup(summary.value("geomean_speedup_correct_ops", json())), "geomean speedup, correct ops");
  for (const char* p : {"fast_1", "fast_1.5", "fast_2"}) html += card(percent(fraction_of(fast, p)), p);
  html +=
      card(field(summary, "failed") + " / " + field(summary, "rejected") + " / " + field(summary, "errors"), "failed / rejected / error");
  html += "</div>";
  html += "<div class=\"charts\"><div class=\"chart\"><h4>fast_p curve</h4>" + fast_p_curve_svg(ops) + "</div></div>";
  return html;
}

}  // namespace kg::results::html

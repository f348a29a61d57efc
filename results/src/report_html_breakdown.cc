// Where the failures fall and how fast the correct ops are: failures by category, by value family
// (the evidence's "values") and by input trait (failure_traits), and the speedup distribution.
#include "html_text.h"
#include "report_html_parts.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kg::results::html {
namespace {

Counts most_first(const std::map<std::string, long long>& counts) {
  Counts sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

std::string chart(const std::string& svg) { return "<div class=\"chart\">" + svg + "</div>"; }

}  // namespace

std::string breakdown_section(const std::vector<const json*>& ops_arrays) {
  std::map<std::string, long long> categories, families, traits;
  std::vector<double> speedups;
  for (const json* ops : ops_arrays) {
    for (const json& op : *ops) {
      if (op.contains("failures") && op["failures"].is_array())
        for (const json& f : op["failures"]) {
          categories[field(f, "category")]++;
          if (f.contains("evidence") && f["evidence"].contains("values")) families[field(f["evidence"], "values")]++;
        }
      if (op.contains("failure_traits") && op["failure_traits"].is_object())
        for (const auto& [trait, n] : op["failure_traits"].items())
          if (n.is_number_integer()) traits[trait] += n.get<long long>();
      if (op.value("verdict", json()) == "pass" && op.contains("speedup") && op["speedup"].is_number()) {
        const double s = op["speedup"].get<double>();
        if (std::isfinite(s) && s > 0) speedups.push_back(s);
      }
    }
  }
  return "<div class=\"charts\">" + chart(bar_chart_svg("failures by category", most_first(categories))) +
         chart(bar_chart_svg("failures by value family", most_first(families))) +
         chart(bar_chart_svg("failures by input trait", most_first(traits))) + chart(speedup_histogram_svg(speedups)) + "</div>";
}

}  // namespace kg::results::html

// The pieces report.html is put together from (report_html.cc), one file per concern: the page's
// frame and assets, the summary, the charts, the op table, the evidence, the audit findings and
// the batch leaderboard. Each returns HTML whose document text went through html::escape.
#pragma once

#include "kernelgate/op_fields.h"
#include "kernelgate/results.h"

#include <string>
#include <utility>
#include <vector>

namespace kg::results::html {

// report_html_page.cc: a whole document around `body`, with the stylesheet, the table-sorting
// script and a Content-Security-Policy that allows no network and only that script.
std::string page(const std::string& title, const std::string& body);

// report_html_assets.cc
const std::string& stylesheet();
const std::string& sorting_script();

// report_html_summary.cc: the run's facts (submission, device, suite, policy, seed, versions),
// the folders that are not op folders, and the summary figures with the fast_p curve.
std::string run_facts(const json& results);
std::string problems_list(const json& results);
std::string summary_section(const json& summary, const std::vector<OpFields>& ops);

// report_html_charts.cc: inline SVG.
using Counts = std::vector<std::pair<std::string, long long>>;
// fast_p: the fraction of ops correct and faster than p times eager, for p from 0 on.
std::string fast_p_curve_svg(const std::vector<OpFields>& ops);
std::string bar_chart_svg(const std::string& title, const Counts& counts);
// Correct ops' speedups in buckets from <0.5x to >=4x.
std::string speedup_histogram_svg(const std::vector<double>& speedups);

// report_html_breakdown.cc: failures by category, value family and input trait, and the speedup
// distribution, over the ops of one or more results.json documents.
std::string breakdown_section(const std::vector<const json*>& ops_arrays);

// report_html_op_table.cc: the sortable table, each op linking to its evidence (id_prefix keeps
// the anchors of several submissions on one page apart).
std::string op_table(const json& ops, const std::vector<OpFields>& fields, const std::string& id_prefix);

// report_html_evidence.cc: per op, each failure's evidence, each rule's evidence, errors, the
// build log, skipped samples and the timed samples.
std::string evidence_section(const json& ops, const std::vector<OpFields>& fields, const std::string& id_prefix);

// report_html_audit.cc: audit.json's findings per rule and op.
std::string audit_section(const json& audit);

// report_html_leaderboard.cc: the batch's submissions ranked.
std::string leaderboard_section(const std::vector<BatchEntry>& entries);

// The CSS class of a verdict's badge, and its rank for sorting (pass < fail < error < rejected).
std::string verdict_badge(const std::string& verdict);
int verdict_rank(const std::string& verdict);

}  // namespace kg::results::html

// report.html put together (kernelgate/report_html.h): one submission's page, a batch's page with
// its leaderboard, and the batch's files.
#include "kernelgate/report_html.h"
#include "html_text.h"
#include "report_html_parts.h"
#include "summary_fields.h"

#include <filesystem>

namespace kg::results {
namespace {

using html::escape;

std::string section(const std::string& id, const std::string& heading, const std::string& content) {
  return "<section id=\"" + id + "\"><h2>" + heading + "</h2>" + content + "</section>\n";
}

double wall_seconds(const json& results) {
  const json summary = results.value("summary", json::object());
  return summary.contains("wall_seconds") && summary["wall_seconds"].is_number() ? summary["wall_seconds"].get<double>() : 0.0;
}

std::string run_identity_facts(const RunIdentity& id) {
  const std::pair<const char*, std::string> rows[] = {
      {"device", id.device},
      {"suite", id.suite},
      {"policy", id.policy},
      {"seed", std::to_string(id.seed)},
      {"timing", id.timing ? "on" : "off"},
      {"shard", id.shard_count == 1 ? "the whole run" : std::to_string(id.shard_index) + "/" + std::to_string(id.shard_count)},
      {"kernelgate", id.kernelgate_version},
      {"libtorch", id.torch_version}};
  std::string facts = "<table class=\"facts\">";
  for (const auto& [label, value] : rows) facts += "<tr><th>" + std::string(label) + "</th><td>" + escape(value) + "</td></tr>";
  return facts + "</table>";
}

}  // namespace

std::string report_html(const json& results, const json& audit) {
  const json& ops = ops_of(results, "results.json");
  const std::vector<OpFields> fields = op_fields_of(ops);
  const std::string submission = html::field(results, "submission");
  const std::string verdict = submission_verdict(fields);
  std::string body = "<header><h1>kernelgate report</h1><p>" + escape(submission.empty() ? "self-check" : submission) + " · " +
                     std::to_string(fields.size()) + " ops · " + html::verdict_badge(verdict) + "</p></header>\n<main>\n";
  body += section("summary", "Summary",
                  html::run_facts(results) + html::problems_list(results) +
                      html::summary_section(summary_of_ops(ops, wall_seconds(results)), fields));
  body += section("ops", "Ops", html::op_table(ops, fields, ""));
  body += section("breakdown", "Failures and speedups", html::breakdown_section({&ops}));
  if (!audit.is_null()) body += section("audit", "Audit findings", html::audit_section(audit));
  body += section("evidence", "Evidence per op", html::evidence_section(ops, fields, ""));
  return html::page("kernelgate report: " + submission, body + "</main>\n");
}

std::string batch_report_html(const RunIdentity& id, const std::vector<BatchEntry>& entries) {
  std::string body = "<header><h1>kernelgate batch report</h1><p>" + std::to_string(entries.size()) + " submissions · suite " +
                     escape(id.suite) + " · " + escape(id.device) + "</p></header>\n<main>\n";
  body += section("run", "Run", run_identity_facts(id));
  body += section("leaderboard", "Leaderboard", html::leaderboard_section(entries));
  std::vector<const json*> ops_arrays;
  for (const BatchEntry& e : entries) ops_arrays.push_back(&ops_of(e.results, e.name + "/results.json"));
  body += section("breakdown", "Failures and speedups over the batch", html::breakdown_section(ops_arrays));
  for (size_t i = 0; i < entries.size(); ++i) {
    const json& ops = *ops_arrays[i];
    const std::vector<OpFields> fields = entry_op_fields(entries[i]);
    const std::string prefix = "sub-" + std::to_string(i) + "-";
    body += section("sub-" + std::to_string(i), escape(entries[i].name) + " " + html::verdict_badge(submission_verdict(fields)),
                    html::problems_list(entries[i].results) +
                        html::summary_section(summary_of_ops(ops, wall_seconds(entries[i].results)), fields) +
                        html::op_table(ops, fields, prefix) + "<h3>Evidence per op</h3>" + html::evidence_section(ops, fields, prefix));
  }
  return html::page("kernelgate batch report", body + "</main>\n");
}

void write_batch_reports(const std::string& out_dir, const RunIdentity& id, const std::vector<BatchEntry>& entries) {
  const std::filesystem::path out = out_dir;
  for (const BatchEntry& e : entries) write_atomically((out / e.name / "report.html").string(), report_html(e.results));
  write_atomically((out / "report.html").string(), batch_report_html(id, entries));
}

}  // namespace kg::results

// Per op, what a reader needs to act on its verdict: each failure's evidence (the sample in trace
// syntax, where and how much it was off, the first mismatch, the diagnosis, the repro command), each
// rule's evidence, errors, skipped samples, the timed samples and the build log.
#include "html_text.h"
#include "report_html_parts.h"

namespace kg::results::html {
namespace {

// Failures shown per op; results.json holds them all.
constexpr size_t kFailuresShown = 25;

std::string evidence_row(const std::string& label, const std::string& value, bool code = false) {
  if (value.empty()) return "";
  return "<dt>" + escape(label) + "</dt><dd>" + (code ? "<code>" + escape(value) + "</code>" : escape(value)) + "</dd>";
}

std::string mismatch_text(const json& ev) {
  if (!ev.contains("mismatches")) return "";
  std::string text = field(ev, "mismatches") + " of " + field(ev, "numel");
  if (ev.contains("mismatch_fraction") && ev["mismatch_fraction"].is_number())
    text += " (" + percent(ev["mismatch_fraction"].get<double>()) + ")";
  return text;
}

std::string first_mismatch_text(const json& ev) {
  if (!ev.contains("first_mismatch") || !ev["first_mismatch"].is_object()) return "";
  const json& m = ev["first_mismatch"];
  return "at " + field(m, "index") + ": expected " + field(m, "expected") + ", got " + field(m, "actual");
}

std::string failure_html(const json& failure) {
  const json& ev = failure.contains("evidence") && failure["evidence"].is_object() ? failure["evidence"] : json::object();
  std::string html = "<div class=\"failure\"><strong>" + escape(field(failure, "category")) + "</strong>";
  if (ev.contains("message")) html += "<pre class=\"message\">" + escape(field(ev, "message")) + "</pre>";
  html += "<dl class=\"evidence\">";
  html += evidence_row("sample", field(ev, "sample"), true);
  html += evidence_row("sample index", field(ev, "sample_index"));
  html += evidence_row("label", field(ev, "label"));
  html += evidence_row("values", field(ev, "values"));
  html += evidence_row("input traits", field(ev, "input_traits"));
  html += evidence_row("where", field(ev, "where"));
  // No element compared (a shape or dtype mismatch): the counts and errors would read as zero error.
  if (ev.value("numel", json()) != json(0)) {
    html += evidence_row("mismatches", mismatch_text(ev));
    html += evidence_row("max abs error", ev.contains("max_abs_err") ? field(ev, "max_abs_err") : "");
    html += evidence_row("max rel error", ev.contains("max_rel_err") ? field(ev, "max_rel_err") : "");
    html += evidence_row("max ULP", ev.contains("max_ulp") ? field(ev, "max_ulp") : "");
  }
  html += evidence_row("first mismatch", first_mismatch_text(ev));
  html += evidence_row("diagnosis", field(ev, "diagnosis"));
  html += "</dl>";
  if (ev.contains("repro")) html += "<details><summary>repro command</summary><pre>" + escape(field(ev, "repro")) + "</pre></details>";
  return html + "</div>";
}

std::string timing_html(const json& timing) {
  std::string html =
      "<details><summary>timed samples</summary><table><thead><tr><th>sample</th><th class=\"num\">reps</th>"
      "<th class=\"num\">candidate median</th><th class=\"num\">eager median</th><th class=\"num\">speedup</th></tr></thead><tbody>";
  for (const json& t : timing) {
    const auto seconds = [&](const char* key) { return t.contains(key) && t[key].is_number() ? number(t[key].get<double>()) + " s" : "—"; };
    html += "<tr><td><code>" + escape(field(t, "sample")) + "</code></td><td class=\"num\">" + escape(field(t, "reps")) +
            "</td><td class=\"num\">" + seconds("candidate_median_s") + "</td><td class=\"num\">" + seconds("eager_median_s") +
            "</td><td class=\"num\">" + speedup(t.value("speedup", json())) + "</td></tr>";
  }
  return html + "</tbody></table></details>";
}

std::string op_evidence(const json& op, const OpFields& o, const std::string& id) {
  std::string html =
      "<div class=\"op-evidence\" id=\"" + id + "\"><h3><code>" + escape(o.op) + "</code> " + verdict_badge(o.verdict) + "</h3>";
  bool said_anything = false;
  if (op.contains("error")) {
    html += "<h4>error</h4><pre class=\"error\">" + escape(field(op, "error")) + "</pre>";
    said_anything = true;
  }
  for (const json& v : array_member(op, "violations")) {
    html += "<div class=\"violation\"><strong>rule " + escape(field(v, "rule")) + "</strong><pre>" + escape(field(v, "evidence")) +
            "</pre></div>";
    said_anything = true;
  }
  const json& failures = array_member(op, "failures");
  for (size_t i = 0; i < failures.size() && i < kFailuresShown; ++i) html += failure_html(failures[i]);
  if (failures.size() > kFailuresShown)
    html += "<p class=\"muted\">" + std::to_string(failures.size() - kFailuresShown) + " more failures of this op in results.json</p>";
  said_anything |= !failures.empty();
  for (const char* key : {"timing_skipped", "build_cache_rejected"})
    if (op.contains(key)) html += "<p><strong>" + std::string(key) + "</strong>: " + escape(field(op, key)) + "</p>";
  const json& skipped = array_member(op, "skipped");
  if (!skipped.empty()) {
    html += "<details><summary>" + std::to_string(skipped.size()) + " samples skipped (the reference cannot run them here)</summary><ul>";
    for (const json& s : skipped) html += "<li><code>" + escape(field(s, "sample")) + "</code>: " + escape(field(s, "reason")) + "</li>";
    html += "</ul></details>";
  }
  if (!array_member(op, "timing").empty()) html += timing_html(op["timing"]);
  if (op.contains("build_log")) html += "<details><summary>build log</summary><pre>" + escape(field(op, "build_log")) + "</pre></details>";
  if (!said_anything)
    html += o.verdict == "pass" ? "<p class=\"muted\">every sample right; no rule fired</p>"
                                : "<p class=\"muted\">results.json records no evidence for this verdict</p>";
  return html + "</div>";
}

}  // namespace

std::string evidence_section(const json& ops, const std::vector<OpFields>& fields, const std::string& id_prefix) {
  std::string html;
  for (size_t i = 0; i < fields.size(); ++i) html += op_evidence(ops[i], fields[i], id_prefix + "op-" + std::to_string(i));
  return html;
}

}  // namespace kg::results::html

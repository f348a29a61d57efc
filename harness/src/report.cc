// results.json and the terminal table.
#include "report_json.h"

#include "kernelgate/catalogue.h"
#include "kernelgate/results.h"
#include "kernelgate/text_safety.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace kg::harness {
namespace {

using nlohmann::json;
using policy::Verdict;
using policy::verdict_id;

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json traits_json(unsigned traits) { return json(trait_list(traits)); }

// A command line that re-runs exactly this sample (same values: same seed and sample index).
std::string repro_command(const Report& rep, const std::string& op, const Failure& f) {
  std::string quoted;
  for (char c : f.sample) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  std::ostringstream o;
  o << "kernelgate repro " << (rep.submission.empty() ? "--self-check" : rep.submission) << " --op " << op << " --sample '" << quoted
    << "' --values " << f.family << " --index " << f.index << " --seed " << rep.seed << " --policy " << rep.policy;
  return o.str();
}

json failure_json(const Report& rep, const std::string& op, const Failure& f) {
  json ev = json::object();
  if (!f.sample.empty()) ev["sample"] = f.sample;
  if (f.index >= 0) {
    ev["sample_index"] = f.index;
    ev["repro"] = repro_command(rep, op, f);
  }
  if (!f.label.empty()) ev["label"] = f.label;
  if (!f.family.empty()) ev["values"] = f.family;
  ev["input_traits"] = traits_json(f.traits);
  ev["message"] = f.message;
  if (!f.diagnosis.empty()) ev["diagnosis"] = f.diagnosis;
  if (f.mismatch) {
    const Mismatch& m = *f.mismatch;
    ev["where"] = m.where;
    ev["mismatches"] = m.mismatches;
    ev["numel"] = m.numel;
    ev["mismatch_fraction"] = m.numel ? static_cast<double>(m.mismatches) / static_cast<double>(m.numel) : 0.0;
    ev["max_abs_err"] = finite_or_null(m.max_abs_err);
    ev["max_rel_err"] = finite_or_null(m.max_rel_err);
    ev["max_ulp"] = finite_or_null(m.max_ulp);
    if (!m.first_index.empty() || m.mismatches > 0) {
      ev["first_mismatch"] = {{"index", m.first_index},
                              {"expected", std::isfinite(m.expected) ? json(m.expected) : json(std::to_string(m.expected))},
                              {"actual", std::isfinite(m.actual) ? json(m.actual) : json(std::to_string(m.actual))}};
    }
  }
  return {{"category", policy::category_id(f.category)}, {"evidence", ev}};
}

// A table cell or message line on the operator's terminal: one line, no control characters.
std::string shown(const std::string& s) { return text::terminal_safe(s); }

}  // namespace

std::string report_json(const Report& rep) {
  json ops = json::array();
  for (const auto& r : rep.ops) {
    json o;
    o["op"] = r.op;
    o["kind"] = r.kind;
    if (!r.suite.empty()) o["suite"] = r.suite;
    o["verdict"] = verdict_id(r.verdict);
    o["tests"] = {{"total", r.total}, {"passed", r.passed}, {"skipped", r.skipped.size()}};
    json sk = json::array();
    for (const auto& [sample, why] : r.skipped) sk.push_back({{"sample", sample}, {"reason", why}});
    o["skipped"] = sk;
    json fs = json::array();
    for (const auto& f : r.failures) fs.push_back(failure_json(rep, r.op, f));
    o["failures"] = fs;
    json vs = json::array();
    for (const auto& v : r.violations) vs.push_back({{"rule", v.rule}, {"evidence", v.evidence}});
    o["violations"] = vs;
    o["speedup"] = r.speedup ? finite_or_null(*r.speedup) : json(nullptr);
    json ts = json::array();
    for (const auto& t : r.timings)
      ts.push_back({{"sample", t.sample},
                    {"reps", t.reps},
                    {"eager_reps", t.eager_reps},
                    {"value_sets", t.value_sets},
                    {"candidate_median_s", t.candidate_median_s},
                    {"candidate_iqr_s", t.candidate_iqr_s},
                    {"eager_median_s", t.eager_median_s},
                    {"eager_iqr_s", t.eager_iqr_s},
                    {"roofline_floor_s", t.floor_s},
                    {"speedup", finite_or_null(t.speedup)}});
    o["timing"] = ts;
    if (!r.timing_skipped.empty()) o["timing_skipped"] = r.timing_skipped;
    if (!r.sweep_passed.empty()) {
      json sw = json::object();
      for (const auto& [tol, n] : r.sweep_passed) sw[tol] = {{"passed", n}, {"total", r.total}};
      o["tolerance_sweep"] = sw;
    }
    o["failure_traits"] = r.failure_traits;
    o["build_seconds"] = r.build_s;
    o["build_cache_hit"] = r.build_cache_hit;
    if (!r.build_cache_rejected.empty()) o["build_cache_rejected"] = r.build_cache_rejected;
    if (!r.build_notes.empty()) o["build_notes"] = r.build_notes;
    o["eval_seconds"] = r.eval_s;
    o["phase_seconds"] = {{"samples", r.samples_s},           {"build", r.build_step_s}, {"device_wait", r.device_wait_s},
                          {"runner_start", r.runner_start_s}, {"judging", r.judging_s},  {"timing", r.timing_s},
                          {"runner_end", r.runner_end_s}};
    // The parts are the op evaluation's own phases; a KernelBench pair's judging and timing have
    // none of them, and get neither object.
    const OpResult::JudgingSeconds& jp = r.judging_parts;
    if (jp.samples > 0)
      o["judging_seconds"] = {{"samples", jp.samples},           {"repeat", jp.repeat},     {"fresh", jp.fresh},
                              {"same_address", jp.same_address}, {"enlarged", jp.enlarged}, {"diagnosis", jp.diagnosis}};
    if (const OpResult::RungSeconds& rp = r.rung_parts; rp.climbed)
      o["rung_seconds"] = {{"draw", rp.draw}, {"reference", rp.reference}, {"call", rp.call}, {"awaited", rp.awaited}};
    const OpResult::TimingSeconds& tp = r.timing_parts;
    if (tp.probe > 0)
      o["timing_seconds"] = {
          {"probe", tp.probe}, {"draws", tp.draws}, {"candidate", tp.candidate},    {"candidate_calls", tp.candidate_calls},
          {"judge", tp.judge}, {"eager", tp.eager}, {"eager_calls", tp.eager_calls}};
    if (!r.error.empty()) o["error"] = r.error;
    if (!r.build_log.empty() && r.verdict != Verdict::Pass) o["build_log"] = r.build_log;
    ops.push_back(o);
  }
  json doc = report_identity_json(rep);
  doc["results_schema"] = 1;  // docs/schema/results.v1.schema.json
  doc["summary"] = results::summary_of_ops(ops, rep.wall_s);
  doc["ops"] = ops;
  return dump_document(std::move(doc));
}

json report_identity_json(const Report& rep) {
  json problems = json::array();
  for (const auto& [folder, why] : rep.problems) problems.push_back({{"folder", folder}, {"problem", why}});
  return {{"kernelgate_version", rep.version},
          {"torch_version", rep.torch_version},
          {"device", rep.device},
          {"suite", rep.suite},
          {"policy", rep.policy},
          {"submission", rep.submission},
          {"seed", rep.seed},
          {"problems", problems}};
}

std::string report_table(const Report& rep) {
  std::ostringstream o;
  o << std::left << std::setw(22) << "op" << std::setw(8) << "kind" << std::setw(10) << "verdict" << std::setw(9) << "tests"
    << std::setw(10) << "speedup"
    << "failures\n";
  for (const auto& r : rep.ops) {
    std::map<std::string, int> cats;
    for (const auto& f : r.failures) cats[policy::category_id(f.category)]++;
    std::string fails;
    for (const auto& [c, n] : cats) fails += (fails.empty() ? "" : ", ") + c + " x" + std::to_string(n);
    if (!r.failure_traits.empty()) {
      std::string tr;
      for (const auto& [t, n] : r.failure_traits) tr += (tr.empty() ? "" : ", ") + t + " " + std::to_string(n);
      fails += " [" + tr + "]";
    }
    for (const auto& v : r.violations) fails += (fails.empty() ? "" : "; ") + std::string("violation ") + v.rule;
    if (!r.error.empty()) fails = r.error.substr(0, 100);
    const std::string op = shown(r.op);
    std::ostringstream sp;
    if (r.speedup) sp << std::fixed << std::setprecision(2) << *r.speedup << "x";
    else sp << "-";
    o << std::setw(22) << (op.size() < 22 ? op : op + " ") << std::setw(8) << (r.kind.empty() ? "-" : shown(r.kind)) << std::setw(10)
      << verdict_id(r.verdict) << std::setw(9) << (std::to_string(r.passed) + "/" + std::to_string(r.total)) << std::setw(10) << sp.str()
      << shown(fails) << "\n";
  }
  // The first failure of each failing op, with its evidence in one line.
  for (const auto& r : rep.ops) {
    if (r.failures.empty()) continue;
    const Failure& f = r.failures.front();
    o << "\n" << shown(r.op) << ": " << policy::category_id(f.category);
    if (!f.label.empty()) o << " on '" << shown(f.label) << "'";
    // The first line only (a kernel's exception carries a backtrace); the whole text is in results.json.
    const std::string first = f.message.substr(0, std::min<size_t>(f.message.find('\n'), 400));
    o << "\n  " << shown(first) << (first.size() < f.message.size() ? " [...]" : "") << "\n";
    if (!f.sample.empty()) o << "  sample: " << shown(f.sample) << (f.family.empty() ? "" : "  values: " + shown(f.family)) << "\n";
  }
  for (const auto& [folder, why] : rep.problems) o << "\nskipped folder " << shown(folder) << ": " << shown(why) << "\n";
  return o.str();
}

std::string report_feedback(const Report& rep) {
  std::ostringstream o;
  int failing = 0;
  for (const auto& r : rep.ops) {
    if (r.verdict == Verdict::Pass) continue;
    failing++;
    o << "## " << r.op << ": " << verdict_id(r.verdict);
    if (r.total > 0) o << " (" << r.passed << " of " << r.total << " tests passed)";
    o << "\n";
    if (!r.error.empty()) o << "- kernelgate could not evaluate it: " << r.error << "\n";
    for (const auto& v : r.violations) o << "- rule " << v.rule << ": " << v.evidence << "\n";
    if (!r.failure_traits.empty()) {
      o << "- failures concentrate on inputs with:";
      for (const auto& [t, n] : r.failure_traits) o << " " << t << " (" << n << ")";
      o << "\n";
    }
    // At most three failures, one per category first: enough to act on, short enough to paste.
    std::map<policy::Category, int> shown;
    int lines = 0;
    for (const auto& f : r.failures) {
      if (lines >= 3 || shown[f.category]++ > 0) continue;
      lines++;
      o << "- " << policy::category_id(f.category);
      if (!f.sample.empty()) {
        std::string spec = f.sample.substr(f.sample.find(", ") == std::string::npos ? 0 : f.sample.find(", ") + 2);
        o << " on " << spec;
        if (!f.family.empty() && f.family != "normal") o << " with " << f.family << " values";
      }
      o << ": " << f.message.substr(0, 600) << "\n";
    }
    auto compile_error = [](const Failure& f) { return f.category == policy::Category::CompileError; };
    if (!r.build_log.empty() && std::any_of(r.failures.begin(), r.failures.end(), compile_error))
      o << "- compiler output (first lines):\n" << r.build_log.substr(0, 1200) << "\n";
    o << "\n";
  }
  if (failing == 0) o << "All " << rep.ops.size() << " ops passed.\n";
  // The file is pasted into prompts and read in terminals: the same escapes as the table, lines kept.
  bool escaped = false;
  std::string text = text::terminal_safe(o.str(), text::Newlines::Keep, &escaped);
  if (escaped) text += std::string("\n(control characters and ") + text::kEscapeNote + ")\n";
  return text;
}

int report_exit_code(const Report& rep) {
  for (const auto& r : rep.ops)
    if (r.verdict != Verdict::Pass) return 1;
  return rep.ops.empty() ? 1 : 0;
}

}  // namespace kg::harness

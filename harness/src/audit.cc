// The audit report: per rule of the catalogue (catalogue.h, docs/threats.md), what kernelgate
// checks, the profile's action, and per op what was found, "nothing found", or why the check
// never had a chance to fire.
#include "report_json.h"

#include "kernelgate/catalogue.h"
#include "kernelgate/text_safety.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace kg::harness {
namespace {

using nlohmann::json;

using policy::kCalls;
using policy::kCudaHost;
using policy::kRunner;
using policy::kStatic;
using policy::kTimed;
using policy::kTrials;
using policy::RuleInfo;

// Why `stage` never ran for `r`, or "" when it did.
std::string not_reached(unsigned stage, const OpResult& r, const policy::Policy& policy) {
  switch (stage) {
    case kStatic: return r.inspected ? "" : "the artifact was not inspected (no build, or the nvrtc kind's cubin has no host code)";
    case kCalls:
    case kRunner: return r.ran ? "" : "the kernel never ran";
    case kTrials:
      if (r.trial_rounds > 0 || r.repeated) return "";
      if (policy.correctness_trials <= 1) return "the profile asks for one trial";
      return "trials run only once every sample passes";
    case kCudaHost:
      if (r.device_work_watched) return "";
      if (r.kind != "cuda")
        return "only the cuda kind's host code is watched (a cpu kernel runs on the host, an nvrtc kernel has no host code)";
      return r.ran ? "the kernel did not run on a GPU" : "the kernel never ran";
    case kTimed:
      if (!r.timings.empty()) return "";
      if (!policy.timing) return "timing is off in the profile";
      return "timing runs only once every sample and trial passes";
  }
  return "";
}

struct OpFinding {
  std::string op;
  std::string status;  // found | nothing_found | partly_checked | not_checked
  std::vector<std::string> evidence;
  std::string note;  // what was not reached, and why
};

struct RuleReport {
  const RuleInfo* check;
  std::string rule;
  policy::Action action;
  std::vector<OpFinding> ops;
};

OpFinding finding_for(const RuleInfo& c, const OpResult& r, const policy::Policy& policy) {
  OpFinding f;
  f.op = r.op;
  for (const auto& v : r.violations)
    if (v.rule == c.id) f.evidence.push_back(v.evidence);
  std::vector<std::string> missed;
  int reached = 0;
  for (unsigned stage : policy::kLayers) {
    if (!(c.layers & stage)) continue;
    std::string why = not_reached(stage, r, policy);
    if (why.empty()) reached++;
    else if (std::find(missed.begin(), missed.end(), why) == missed.end()) missed.push_back(why);
  }
  for (const auto& m : missed) f.note += (f.note.empty() ? "" : "; ") + m;
  if (!f.evidence.empty()) {
    f.status = "found";
  } else if (c.layers == 0) {
    f.status = "not_checked";
    f.note = "no check in this build";
  } else {
    f.status = missed.empty() ? "nothing_found" : reached > 0 ? "partly_checked" : "not_checked";
  }
  return f;
}

// One report per rule of the catalogue, in its order.
std::vector<RuleReport> rule_reports(const Report& rep, const policy::Policy& policy) {
  std::vector<RuleReport> out;
  for (const RuleInfo& rule : policy::rule_catalogue()) {
    RuleReport rr{&rule, rule.id, policy.action_for(rule.id), {}};
    for (const auto& r : rep.ops) rr.ops.push_back(finding_for(rule, r, policy));
    out.push_back(rr);
  }
  return out;
}

bool clean(const Report& rep) {
  for (const auto& r : rep.ops)
    if (r.verdict != policy::Verdict::Pass || !r.violations.empty()) return false;
  return !rep.ops.empty();
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

// Markdown table cells: no pipes or line breaks.
std::string cell(const std::string& s) {
  std::string o;
  for (char c : one_line(s)) o += c == '|' ? std::string("\\|") : std::string(1, c);
  return o;
}

std::string status_text(const OpFinding& f) {
  if (f.status == "found") return "**found**";
  if (f.status == "nothing_found") return "nothing found";
  if (f.status == "partly_checked") return "nothing found (partly checked: " + f.note + ")";
  return "not checked: " + f.note;
}

std::string profile_summary(const policy::Policy& p) {
  std::ostringstream o;
  o << p.name << " (" << p.correctness_trials << " trials; timing ";
  if (p.timing)
    o << "warmup " << p.timing_warmup << ", " << p.timing_min_reps << "-" << p.timing_max_reps << " reps, >= " << p.timing_min_seconds
      << " s";
  else o << "off";
  o << "; allowed libraries: ";
  if (p.allowed_libraries.empty()) o << "none";
  for (size_t i = 0; i < p.allowed_libraries.size(); ++i) o << (i ? ", " : "") << p.allowed_libraries[i];
  o << ")";
  return o.str();
}

}  // namespace

std::string audit_json(const Report& rep, const policy::Policy& policy, const std::string& date) {
  json ops = json::array();
  for (const auto& r : rep.ops) {
    json o = {{"op", r.op},
              {"kind", r.kind},
              {"verdict", policy::verdict_id(r.verdict)},
              {"tests", {{"total", r.total}, {"passed", r.passed}}},
              {"reached",
               {{"inspected", r.inspected},
                {"ran", r.ran},
                {"trial_rounds", r.trial_rounds},
                {"repeated", r.repeated},
                {"timed_samples", r.timings.size()},
                {"device_work_watched", r.device_work_watched}}}};
    if (!r.error.empty()) o["error"] = r.error;
    std::vector<std::string> cats;
    for (const auto& f : r.failures) {
      const std::string cat = policy::category_id(f.category);
      if (std::find(cats.begin(), cats.end(), cat) == cats.end()) cats.push_back(cat);
    }
    o["failure_categories"] = cats;
    ops.push_back(o);
  }
  json rules = json::array();
  for (const auto& rr : rule_reports(rep, policy)) {
    json per_op = json::array();
    for (const auto& f : rr.ops) {
      json j = {{"op", f.op}, {"status", f.status}, {"evidence", f.evidence}};
      if (!f.note.empty()) j["note"] = f.note;
      per_op.push_back(j);
    }
    rules.push_back({{"rule", rr.rule},
                     {"threats", rr.check->threats},
                     {"checked", rr.check->checked},
                     {"action", policy::action_name(rr.action)},
                     {"ops", per_op}});
  }
  json doc = report_identity_json(rep);
  doc["date"] = date;
  doc["clean"] = clean(rep);
  doc["ops"] = ops;
  doc["rules"] = rules;
  return dump_document(std::move(doc));
}

std::string audit_markdown(const Report& rep, const policy::Policy& policy, const std::string& date) {
  std::ostringstream o;
  int not_clean = 0;
  for (const auto& r : rep.ops) not_clean += r.verdict != policy::Verdict::Pass || !r.violations.empty();
  o << "# kernelgate audit report\n\n"
    << "| | |\n|---|---|\n"
    << "| submission | " << cell(rep.submission) << " |\n"
    << "| result | "
    << (clean(rep) ? "clean: every op passed, no rule found anything"
                   : std::to_string(not_clean) + " of " + std::to_string(rep.ops.size()) + " ops not clean")
    << " |\n"
    << "| date (UTC) | " << cell(date) << " |\n"
    << "| kernelgate | " << cell(rep.version) << " |\n"
    << "| libtorch | " << cell(rep.torch_version) << " |\n"
    << "| device | " << cell(rep.device) << " |\n"
    << "| suite | " << cell(rep.suite) << " |\n"
    << "| profile | " << cell(profile_summary(policy)) << " |\n"
    << "| seed | " << rep.seed << " (`kernelgate audit DIR --seed " << rep.seed << "` draws the same inputs) |\n\n";

  o << "## Verdicts\n\n| op | kind | verdict | tests passed | speedup | failures |\n|---|---|---|---|---|---|\n";
  for (const auto& r : rep.ops) {
    std::string fails;
    for (const auto& f : r.failures) {
      const std::string cat = policy::category_id(f.category);
      if (fails.find(cat) == std::string::npos) fails += (fails.empty() ? "" : ", ") + cat;
    }
    if (!r.error.empty()) fails = "error: " + r.error.substr(0, 200);
    std::ostringstream sp;
    if (r.speedup) sp << std::fixed << std::setprecision(2) << *r.speedup << "x";
    else sp << "-";
    o << "| " << cell(r.op) << " | " << cell(r.kind.empty() ? "-" : r.kind) << " | " << policy::verdict_id(r.verdict) << " | " << r.passed
      << "/" << r.total << " | " << sp.str() << " | " << cell(fails.empty() ? "-" : fails) << " |\n";
  }
  for (const auto& [folder, why] : rep.problems)
    o << "\nNot an op folder, skipped: `" << one_line(folder) << "`: " << one_line(why) << "\n";

  o << "\n## Rules (docs/threats.md)\n\n"
    << "Actions: reject (the op fails), flag (reported, verdict unchanged), off (ignored). Trials and timing run only\n"
    << "for an op whose samples all pass, so the rules that need them are not checked for an op that failed earlier.\n";
  for (const auto& rr : rule_reports(rep, policy)) {
    o << "\n### " << rr.rule << " (" << rr.check->threats << ") - " << policy::action_name(rr.action) << "\n\n"
      << "Checked: " << rr.check->checked << ".\n\n";
    for (const auto& f : rr.ops) {
      o << "- " << f.op << ": " << status_text(f) << "\n";
      for (const auto& e : f.evidence) o << "  - evidence: " << one_line(e) << "\n";
    }
    if (rr.ops.empty()) o << "- (no ops evaluated)\n";
  }
  // Forwarded and read in terminals and viewers: control characters and non-UTF-8 bytes escaped.
  bool escaped = false;
  std::string text = text::terminal_safe(o.str(), text::Newlines::Keep, &escaped);
  if (escaped) text += std::string("\n(control characters and ") + text::kEscapeNote + ")\n";
  return text;
}

}  // namespace kg::harness

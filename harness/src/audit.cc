// The audit report: per rule of THREATS.md section B, what kernelgate checks, the profile's action,
// and per op what was found, "nothing found", or why the check never had a chance to fire.
#include "report_json.h"

#include "kernelgate/text_safety.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace kg::harness {
namespace {

using nlohmann::json;

// Where a rule's evidence comes from; an op reaches some of these and not others.
constexpr unsigned kStatic = 1u << 0;  // the built artifact, read as bytes before any of it runs
constexpr unsigned kCalls = 1u << 1;   // every judged call (samples, trials, timed calls)
constexpr unsigned kRunner = 1u << 2;  // the runner's observers and the sandbox's record around each call
constexpr unsigned kTrials = 1u << 3;  // fresh-input rounds and identical repeats after every sample passed
constexpr unsigned kTimed = 1u << 4;   // the timed calls
constexpr unsigned kCudaHost = 1u << 5;  // the cuda kind's host code on a GPU, under the runner's device work watch

struct RuleCheck {
  const char* rule;
  const char* threats;  // THREATS.md section B items
  unsigned stages;      // 0: this build has no check for the rule
  const char* checked;
};

// The one table of what is checked per rule; docs/audit.md and docs/rules.md say more.
const RuleCheck kChecks[] = {
    {"fallback_to_torch", "B1", kStatic,
     "static: the artifact's imports of aten operator entry points (at::_ops::*::call/redispatch), per-backend kernels "
     "(at::native, at::cpu, ...), the dispatcher, the TorchScript and autograd runtimes and symbol lookup (dlsym, dlopen, "
     "dl_iterate_phdr), less what the op's stub built the same way imports"},
    {"forbidden_library", "B2", kStatic,
     "static: DT_NEEDED entries, imports of vendor library APIs (BLAS, LAPACK, cuBLAS, cuDNN, oneDNN, MKL, ...), header-only "
     "library namespaces in exports, library names in the file when it imports dlopen/dlsym; against the profile's allowed libraries"},
    {"trivial_output", "B3, B4", kCalls,
     "every wrong call (samples, trials, timed calls): an output that is constant, or bitwise one of the inputs, where the "
     "reference is not"},
    {"unwritten_output", "B5", kCalls,
     "every wrong call: most wrong elements hold, bit for bit, an earlier call's output at the same positions"},
    {"input_mutated", "B6", kCalls,
     "every call: each argument the schema does not let the op write is compared bit for bit before and after"},
    {"replayed_output", "B7", kCalls | kTrials,
     "fresh-input trial rounds on up to 4 passing samples, and every wrong call: an output identical to an earlier call's "
     "on other values"},
    {"stateful_output", "B8", kTrials,
     "fresh-input trial rounds and two identical repeats of a passing call: right on the first call, wrong later"},
    {"nondeterministic_output", "B9", kTrials, "two identical repeats of a passing call must give the same answer"},
    {"async_escape", "B10", kRunner,
     "runner evidence after every call: outputs or arguments that change after a judged call returned (CPU), threads the "
     "kernel started still running when it returned, on a GPU the timed stream still busy once the call's end event completed, its median wait for an idle device against eager's, and "
     "the work a call (timed or not) queued on streams of its own (bracketed by events: it must begin after the call's start event "
     "and end before its stop event); and one "
     "judged call after timing made in a timed call's state (no allocation poisoning)"},
    {"impossible_speed", "B11", kTimed,
     "timing: the candidate's median on each timed sample, every timed call on values no earlier call saw, against the "
     "roofline floor (output bytes at the measured peak bandwidth, matmul-family flops at the peak rate)"},
    {"timer_tampering", "B12", kStatic,
     "static: exports of clock or runtime symbols (interposition), imports of clocks and code-patching tools (mprotect, "
     "syscall, dl_iterate_phdr), text relocations, writable+executable segments, an executable stack"},
    {"cache_tampering", "B13", kStatic | kRunner,
     "static: imports of persisting-L2 and device-limit APIs; on a GPU, the persisting-L2 limit and window read back after "
     "every call"},
    {"shape_specialisation", "B14", kStatic | kCalls | kTimed,
     "static: imports that read the environment, argv or host identity; the timed calls' outputs judged like the first "
     "call's; right on every small sample and wrong on every larger one"},
    {"no_device_work", "B19", kCudaHost,
     "on a GPU, the cuda kind: every judged call that returns elements must queue device work through libcudart (a kernel "
     "launch, memset or device-to-device copy, counted by the runner's own libcudart entry points); a result computed on "
     "the host and copied up, or a host function queued on a stream, is not"},
    {"protocol_violation", "B17", kStatic | kRunner,
     "every exchange with the runner: a well-formed reply, claimed times within the supervisor's own clock, nothing written "
     "to the runner's stdout; the artifact readable as a shared object"},
    {"sandbox_violation", "sandbox (THREATS.md A)", kRunner,
     "the sandbox's record of every runner: a system call its seccomp filter denied"},
};

const RuleCheck* check_for(const std::string& rule) {
  for (const auto& c : kChecks)
    if (rule == c.rule) return &c;
  return nullptr;
}

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
      if (r.kind != "cuda") return "only the cuda kind's host code is watched (a cpu kernel runs on the host, an nvrtc kernel has no host code)";
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
  std::string note;    // what was not reached, and why
};

struct RuleReport {
  const RuleCheck* check;
  std::string rule;
  policy::Action action;
  std::vector<OpFinding> ops;
};

OpFinding finding_for(const RuleCheck& c, const OpResult& r, const policy::Policy& policy) {
  OpFinding f;
  f.op = r.op;
  for (const auto& v : r.violations)
    if (v.rule == c.rule) f.evidence.push_back(v.evidence);
  std::vector<std::string> missed;
  int reached = 0;
  for (unsigned stage : {kStatic, kCalls, kRunner, kTrials, kTimed, kCudaHost}) {
    if (!(c.stages & stage)) continue;
    std::string why = not_reached(stage, r, policy);
    if (why.empty()) reached++;
    else if (std::find(missed.begin(), missed.end(), why) == missed.end()) missed.push_back(why);
  }
  for (const auto& m : missed) f.note += (f.note.empty() ? "" : "; ") + m;
  if (!f.evidence.empty()) {
    f.status = "found";
  } else if (c.stages == 0) {
    f.status = "not_checked";
    f.note = "no check in this build";
  } else {
    f.status = missed.empty() ? "nothing_found" : reached > 0 ? "partly_checked" : "not_checked";
  }
  return f;
}

std::vector<RuleReport> rule_reports(const Report& rep, const policy::Policy& policy) {
  std::vector<RuleReport> out;
  for (const auto& rule : policy::known_rules()) {
    RuleReport rr{check_for(rule), rule, policy.action_for(rule), {}};
    const RuleCheck c = rr.check ? *rr.check : RuleCheck{rule.c_str(), "?", 0, "no description in this build"};
    for (const auto& r : rep.ops) rr.ops.push_back(finding_for(c, r, policy));
    out.push_back(rr);
  }
  return out;
}

bool clean(const Report& rep) {
  for (const auto& r : rep.ops)
    if (r.verdict != "pass" || !r.violations.empty()) return false;
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
  if (p.timing) o << "warmup " << p.timing_warmup << ", " << p.timing_min_reps << "-" << p.timing_max_reps << " reps, >= " << p.timing_min_seconds << " s";
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
              {"verdict", r.verdict},
              {"tests", {{"total", r.total}, {"passed", r.passed}}},
              {"reached", {{"inspected", r.inspected}, {"ran", r.ran}, {"trial_rounds", r.trial_rounds}, {"repeated", r.repeated},
                           {"timed_samples", r.timings.size()}, {"device_work_watched", r.device_work_watched}}}};
    if (!r.error.empty()) o["error"] = r.error;
    std::vector<std::string> cats;
    for (const auto& f : r.failures)
      if (std::find(cats.begin(), cats.end(), f.category) == cats.end()) cats.push_back(f.category);
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
                     {"threats", rr.check ? rr.check->threats : ""},
                     {"checked", rr.check ? rr.check->checked : "no description in this build"},
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
  for (const auto& r : rep.ops) not_clean += r.verdict != "pass" || !r.violations.empty();
  o << "# kernelgate audit report\n\n"
    << "| | |\n|---|---|\n"
    << "| submission | " << cell(rep.submission) << " |\n"
    << "| result | " << (clean(rep) ? "clean: every op passed, no rule found anything" : std::to_string(not_clean) + " of " + std::to_string(rep.ops.size()) + " ops not clean") << " |\n"
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
    for (const auto& f : r.failures)
      if (fails.find(f.category) == std::string::npos) fails += (fails.empty() ? "" : ", ") + f.category;
    if (!r.error.empty()) fails = "error: " + r.error.substr(0, 200);
    std::ostringstream sp;
    if (r.speedup) sp << std::fixed << std::setprecision(2) << *r.speedup << "x";
    else sp << "-";
    o << "| " << cell(r.op) << " | " << cell(r.kind.empty() ? "-" : r.kind) << " | " << r.verdict << " | " << r.passed << "/" << r.total << " | "
      << sp.str() << " | " << cell(fails.empty() ? "-" : fails) << " |\n";
  }
  for (const auto& [folder, why] : rep.problems) o << "\nNot an op folder, skipped: `" << one_line(folder) << "`: " << one_line(why) << "\n";

  o << "\n## Rules (THREATS.md section B)\n\n"
    << "Actions: reject (the op fails), flag (reported, verdict unchanged), off (ignored). Trials and timing run only\n"
    << "for an op whose samples all pass, so the rules that need them are not checked for an op that failed earlier.\n";
  for (const auto& rr : rule_reports(rep, policy)) {
    o << "\n### " << rr.rule << " (" << (rr.check ? rr.check->threats : "?") << ") - " << policy::action_name(rr.action) << "\n\n"
      << "Checked: " << (rr.check ? rr.check->checked : "no description in this build") << ".\n\n";
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

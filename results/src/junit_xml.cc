// JUnit XML from results.json documents (junit.h): one testsuite per submission, one testcase per
// op x sample, one per rule finding and per failure tied to no sample.
#include "kernelgate/junit.h"
#include "kernelgate/op_fields.h"
#include "summary_fields.h"

#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kg::results {
namespace {

enum class Outcome { Passed, Failure, Error, Skipped };

struct Testcase {
  std::string classname;  // the op overload
  std::string name;
  Outcome outcome = Outcome::Passed;
  std::string type;     // failure/error type: the category, "rule:ID" or "error"
  std::string message;  // one line
  std::string body;     // the evidence, several lines
};

struct Counts {
  size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  void add(const Testcase& t) {
    tests++;
    failures += t.outcome == Outcome::Failure;
    errors += t.outcome == Outcome::Error;
    skipped += t.outcome == Outcome::Skipped;
  }
};

// The first line, at most 300 bytes, never cut inside a UTF-8 sequence.
std::string one_line(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.size() <= 300) return line;
  size_t cut = 300;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return line.substr(0, cut) + " [...]";
}

std::string text_of(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

const json& evidence_of(const json& failure) {
  static const json none = json::object();
  return failure.contains("evidence") && failure["evidence"].is_object() ? failure["evidence"] : none;
}

// "value_mismatch: 3 of 64 elements differ ... [first mismatch at [0, 5]: expected 1.5, got 2]"
std::string failure_message(const json& failure) {
  const json& ev = evidence_of(failure);
  std::string m = failure.value("category", std::string("failure"));
  if (ev.contains("message")) m += ": " + one_line(text_of(ev["message"]));
  if (ev.contains("first_mismatch") && ev["first_mismatch"].is_object()) {
    const json& fm = ev["first_mismatch"];
    m += " [first mismatch at " + (fm.contains("index") ? fm["index"].dump() : std::string("?")) + ": expected " +
         (fm.contains("expected") ? text_of(fm["expected"]) : "?") + ", got " + (fm.contains("actual") ? text_of(fm["actual"]) : "?") + "]";
  }
  return m;
}

std::string failure_body(const json& failure) {
  const json& ev = evidence_of(failure);
  std::string body = "category: " + failure.value("category", std::string("?")) + "\n";
  for (const char* key : {"sample", "values", "label", "where", "mismatches", "numel", "max_abs_err", "max_rel_err", "max_ulp",
                          "first_mismatch", "diagnosis", "message", "repro"})
    if (ev.contains(key)) body += std::string(key) + ": " + text_of(ev[key]) + "\n";
  return body;
}

long sample_index_of(const json& failure) {
  const json& ev = evidence_of(failure);
  if (!ev.contains("sample_index") || !ev["sample_index"].is_number_integer()) return -1;
  return ev["sample_index"].get<long>();
}

struct SkippedEntry {
  std::string sample, reason;
  bool used = false;
};

std::vector<SkippedEntry> skipped_entries(const json& op, const std::string& where) {
  std::vector<SkippedEntry> out;
  if (!op.contains("skipped")) return out;
  if (!op["skipped"].is_array()) throw std::runtime_error(where + ": skipped: not an array");
  for (size_t i = 0; i < op["skipped"].size(); ++i) {
    const json& s = op["skipped"][i];
    if (!s.is_object() || !s.contains("sample") || !s["sample"].is_string() || !s.contains("reason") || !s["reason"].is_string())
      throw std::runtime_error(where + ": skipped[" + std::to_string(i) + "]: not an object with strings sample and reason");
    out.push_back({s["sample"].get<std::string>(), s["reason"].get<std::string>()});
  }
  return out;
}

// Why the op's samples were never run, when none was: its error, or its first failure tied to no sample.
std::string not_run_reason(const json& op, const std::vector<const json*>& unsampled) {
  if (op.contains("error") && op["error"].is_string()) return "not run: " + one_line(op["error"].get<std::string>());
  if (!unsampled.empty()) return "not run: the op failed with " + unsampled.front()->value("category", std::string("a failure"));
  return "not run";
}

void sample_testcases(const json& op, const OpFields& f, const std::vector<std::string>& calls, const std::string& where,
                      std::vector<Testcase>& out) {
  std::map<long, std::vector<const json*>> by_sample;
  std::vector<const json*> unsampled;
  static const json kNoFailures = json::array();
  const json& failures = op.contains("failures") ? op["failures"] : kNoFailures;
  for (const json& failure : failures) {
    const long index = sample_index_of(failure);
    (index >= 0 ? by_sample[index] : unsampled).push_back(&failure);
  }
  std::vector<SkippedEntry> skipped = skipped_entries(op, where);
  const bool none_run = by_sample.empty() && f.tests_passed == 0;
  const long n = calls.empty() ? f.tests_total : static_cast<long>(calls.size());
  auto add_failing = [&](long i, const std::vector<const json*>& found) {
    const json& first = *found.front();
    Testcase t{f.op,
               "sample " + std::to_string(i) + ": " + evidence_of(first).value("sample", std::string()),
               Outcome::Failure,
               first.value("category", std::string("failure")),
               failure_message(first),
               ""};
    for (const json* failure : found) t.body += failure_body(*failure) + "\n";
    out.push_back(std::move(t));
  };
  for (long i = 0; i < n; ++i) {
    if (auto it = by_sample.find(i); it != by_sample.end()) {
      add_failing(i, it->second);
      continue;
    }
    Testcase t;
    t.classname = f.op;
    t.name = "sample " + std::to_string(i) + (calls.empty() ? "" : ": " + calls[static_cast<size_t>(i)]);
    for (SkippedEntry& s : skipped) {
      if (calls.empty() || s.used || s.sample != calls[static_cast<size_t>(i)]) continue;
      s.used = true;
      t.outcome = Outcome::Skipped;
      t.message = s.reason;
      break;
    }
    if (t.outcome == Outcome::Passed && none_run) {
      t.outcome = Outcome::Skipped;
      t.message = not_run_reason(op, unsampled);
    }
    out.push_back(std::move(t));
  }
  for (const auto& [i, found] : by_sample)
    if (i >= n) add_failing(i, found);
  // Samples skipped before any call (no tensor can be built for them) are not among the judged ones.
  for (const SkippedEntry& s : skipped)
    if (!s.used) out.push_back({f.op, "skipped: " + s.sample, Outcome::Skipped, "", s.reason, ""});
  for (const json* failure : unsampled) {
    const std::string category = failure->value("category", std::string("failure"));
    out.push_back({f.op, category == "compile_error" ? "build" : "op: " + category, Outcome::Failure, category, failure_message(*failure),
                   failure_body(*failure)});
  }
}

void op_testcases(const json& op, size_t index, const SampleCalls& samples, const std::string& source, std::vector<Testcase>& out) {
  OpFields f;
  try {
    f = op_fields(op, index);
  } catch (const std::exception& e) { throw std::runtime_error(source + ": " + e.what()); }
  const std::string where = source + ": ops[" + std::to_string(index) + "] (" + f.op + ")";
  sample_testcases(op, f, samples ? samples(f.op) : std::vector<std::string>{}, where, out);
  for (const json& v : op.value("violations", json::array())) {
    const std::string rule = v.value("rule", std::string("?"));
    const std::string evidence = v.contains("evidence") ? text_of(v["evidence"]) : "";
    out.push_back({f.op, "rule " + rule, Outcome::Failure, "rule:" + rule, rule + ": " + one_line(evidence), evidence});
  }
  if (f.verdict == "error") {
    const std::string error = op.contains("error") ? text_of(op["error"]) : "kernelgate could not evaluate the op";
    out.push_back({f.op, "evaluation", Outcome::Error, "error", one_line(error), error});
  }
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

std::string counts_attributes(const Counts& c) {
  return " tests=\"" + std::to_string(c.tests) + "\" failures=\"" + std::to_string(c.failures) + "\" errors=\"" + std::to_string(c.errors) +
         "\" skipped=\"" + std::to_string(c.skipped) + "\" time=\"" + seconds_text(c.seconds) + "\"";
}

void write_testcase(std::ostringstream& o, const Testcase& t) {
  o << "    <testcase classname=\"" << xml_text(t.classname) << "\" name=\"" << xml_text(t.name) << "\"";
  if (t.outcome == Outcome::Passed) {
    o << "/>\n";
    return;
  }
  o << ">\n";
  if (t.outcome == Outcome::Skipped) {
    o << "      <skipped message=\"" << xml_text(t.message) << "\"/>\n";
  } else {
    const char* element = t.outcome == Outcome::Error ? "error" : "failure";
    o << "      <" << element << " type=\"" << xml_text(t.type) << "\" message=\"" << xml_text(t.message) << "\">" << xml_text(t.body, true)
      << "</" << element << ">\n";
  }
  o << "    </testcase>\n";
}

double wall_seconds(const json& results) {
  if (results.contains("summary") && results["summary"].is_object() && results["summary"].contains("wall_seconds") &&
      results["summary"]["wall_seconds"].is_number())
    return results["summary"]["wall_seconds"].get<double>();
  return 0;
}

void write_properties(std::ostringstream& o, const json& results) {
  o << "    <properties>\n";
  for (const char* key : {"kernelgate_version", "torch_version", "device", "suite", "policy", "seed", "submission"})
    if (results.contains(key)) o << "      <property name=\"" << key << "\" value=\"" << xml_text(text_of(results[key])) << "\"/>\n";
  o << "    </properties>\n";
}

}  // namespace

std::string junit_xml(const std::vector<JunitSubmission>& submissions, const SampleCalls& samples) {
  std::ostringstream suites;
  Counts all;
  for (const JunitSubmission& s : submissions) {
    const std::string source = s.name + "/results.json";
    const json& ops = ops_of(s.results, source);
    std::vector<Testcase> cases;
    for (size_t i = 0; i < ops.size(); ++i) op_testcases(ops[i], i, samples, source, cases);
    Counts c;
    for (const Testcase& t : cases) c.add(t);
    c.seconds = wall_seconds(s.results);
    suites << "  <testsuite name=\"" << xml_text(s.name) << "\"" << counts_attributes(c) << ">\n";
    write_properties(suites, s.results);
    for (const Testcase& t : cases) write_testcase(suites, t);
    suites << "  </testsuite>\n";
    all.tests += c.tests;
    all.failures += c.failures;
    all.errors += c.errors;
    all.skipped += c.skipped;
    all.seconds += c.seconds;
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kernelgate\"" + counts_attributes(all) + ">\n" + suites.str() +
         "</testsuites>\n";
}

}  // namespace kg::results

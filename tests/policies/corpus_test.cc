// Corpus*: the exploit and legitimate-kernel corpora through the real binary.
//
// ExploitCorpus: every directory of tests/exploits/ is a submission that cheats; `kernelgate
// eval DIR --seed 1` must exit 1 and name the expected rule (expect.toml `rule`) among the
// violations of its ops, or, for input_mutated (a verdict category, not a policy rule), among
// their failure categories. expect.toml's `detected_by` says which layer is meant to catch it
// ("static": policies/rules.h on the artifact; "dynamic": trials and runner observers); both
// kinds are asserted, so a rule that is not wired up yet shows here as a failing test.
// LegitCorpus: every directory of tests/legit/ must exit 0 with every op passing and no
// violation at all: a rule that fires here is a false positive.
// BuggyCorpus: every directory of tests/buggy/ is an honest kernel with a real bug; it must exit
// 1 with every op `fail` (never `rejected`), its expect.toml `category` among the failures, and
// no violation at all: a wrong answer is not evidence of cheating.
// CudaExploitCorpus, CudaLegitCorpus: the same for tests/exploits-cuda/ and tests/legit-cuda/.
// PythonLegitCorpus: tests/legit-python/ as LegitCorpus, every op built as the python kind.
// PythonCudaLegitCorpus: tests/legit-python-cuda/, the same on cuda:0 (Triton kernels; a GPU only).
// PythonCudaExploitCorpus: tests/exploits-python-cuda/ as PythonExploitCorpus, on cuda:0 (Triton
// kernels that cheat; a GPU only).
// KernelBenchLegitCorpus, KernelBenchBuggyCorpus, KernelBenchExploitCorpus: tests/legit-kernelbench/,
// tests/buggy-kernelbench/ and tests/exploits-kernelbench/, each entry a solution.py judged by
// `kernelgate eval --problem` against the problem of tests/kernelbench-problems/ its expect.toml
// names (`problem`), as LegitCorpus, BuggyCorpus and PythonExploitCorpus are.
// KernelBenchCudaLegitCorpus, KernelBenchCudaExploitCorpus: tests/legit-kernelbench-cuda/ and
// tests/exploits-kernelbench-cuda/, solutions with load_inline cuda_sources, judged on cuda:0
// where there is a GPU (without one only the exploits kernelgate catches in the built library).
// PythonExploitCorpus: every directory of tests/exploits-python/ ends as its expect.toml says, by
// any of: `rule` (a violation of it, exit 1) with `evidence_contains` (text in its evidence);
// `category` (a failure of it, exit 1) with `message_contains`; `verdict = "pass"` (the attempt
// changes nothing, exit 0) with `min_candidate_median_s` (every timed sample's candidate median
// at least that). Several of these attempts are refused rather than caught, so the verdict
// they come to is a failure, not a rule.
// CorpusLayout: the corpora themselves (sizes, layout, expect.toml, header comments, suite files).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../e2e/e2e_util.h"
#include "kernelgate/catalogue.h"
#include "kernelgate/policy.h"

namespace fs = std::filesystem;

namespace {

// What a corpus's entries must come to: caught by their rule, passing clean, or failing honestly.
// AsExpectSays: an attempt that may be caught by a rule, refused with a failure, or made
// harmless (the python exploits).
enum class Judged { Caught, Passes, FailsHonestly, AsExpectSays };

// The build kind a corpus's sources are written for, and so their file extension.
enum class Lang { Cpu, Cuda, Python, PythonCuda, KernelBench, KernelBenchCuda };

// One corpus: its folder under tests/ (also the name of its output folder) and how it is judged.
struct Corpus {
  std::string kind;
  Judged judged;
  Lang lang;
  bool cuda() const { return lang == Lang::Cuda || lang == Lang::PythonCuda || lang == Lang::KernelBenchCuda; }
  bool kernelbench() const { return lang == Lang::KernelBench || lang == Lang::KernelBenchCuda; }
  bool python() const { return lang == Lang::Python || lang == Lang::PythonCuda || kernelbench(); }
  bool exploit() const { return judged == Judged::Caught || judged == Judged::AsExpectSays; }
  std::string root() const { return KG_CORPUS_DIR "/" + kind; }
};

const Corpus kExploitCorpus{"exploits", Judged::Caught, Lang::Cpu}, kLegitCorpus{"legit", Judged::Passes, Lang::Cpu},
    kBuggyCorpus{"buggy", Judged::FailsHonestly, Lang::Cpu}, kCudaExploitCorpus{"exploits-cuda", Judged::Caught, Lang::Cuda},
    kCudaLegitCorpus{"legit-cuda", Judged::Passes, Lang::Cuda}, kPythonLegitCorpus{"legit-python", Judged::Passes, Lang::Python},
    kPythonExploitCorpus{"exploits-python", Judged::AsExpectSays, Lang::Python},
    kPythonCudaLegitCorpus{"legit-python-cuda", Judged::Passes, Lang::PythonCuda},
    kPythonCudaExploitCorpus{"exploits-python-cuda", Judged::AsExpectSays, Lang::PythonCuda},
    kKernelBenchLegitCorpus{"legit-kernelbench", Judged::Passes, Lang::KernelBench},
    kKernelBenchBuggyCorpus{"buggy-kernelbench", Judged::FailsHonestly, Lang::KernelBench},
    kKernelBenchExploitCorpus{"exploits-kernelbench", Judged::AsExpectSays, Lang::KernelBench},
    kKernelBenchCudaLegitCorpus{"legit-kernelbench-cuda", Judged::Passes, Lang::KernelBenchCuda},
    kKernelBenchCudaExploitCorpus{"exploits-kernelbench-cuda", Judged::AsExpectSays, Lang::KernelBenchCuda};

// The cuda corpora launch only where the NVIDIA driver is present (tools/gpu-check runs them).
bool have_gpu() {
  std::error_code ec;
  return fs::exists("/dev/nvidiactl", ec);
}

// Why the python kind cannot run here ("" when it can): kg-runner's plugin is built only where a
// Python's torch package is the linked libtorch (loader/runner/python/CMakeLists.txt).
std::string python_kind_missing() {
  if (!KG_TEST_PYTHON_KIND) return "kernelgate was built without its python plugin: no Python whose torch is the linked libtorch";
  return "";
}

std::vector<std::string> corpus(const Corpus& c) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(c.root(), ec))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Expect {
  bool has_rule = false;
  std::string rule, detected_by, why;
  // A buggy entry's expected failure category (docs/verdicts.md).
  std::string category;
  // Set for an exploit kernelgate does not catch yet: the test is skipped with this reason, so
  // the gap stays listed (and visible in every test run) instead of silently passing.
  std::string known_gap;
  // Extra `kernelgate eval` arguments (a suite whose shapes the cheat or the bug needs); {dir}
  // is the entry's folder. raw_eval_args keeps {dir} as written.
  std::string eval_args, raw_eval_args;
  // AsExpectSays only (see the header): text the rule's evidence or the failure's evidence must
  // hold, the verdict every op must reach, and a floor on every timed candidate median.
  std::string evidence_contains, message_contains, verdict;
  double min_candidate_median_s = 0;
  // KernelBench entries: the problem file (in tests/kernelbench-problems/) the solution answers.
  std::string problem;
};

Expect read_expect(const std::string& dir) {
  Expect e;
  const toml::table t = toml::parse_file(dir + "/expect.toml");
  e.has_rule = t.contains("rule");
  e.rule = t["rule"].value_or(std::string("<missing>"));
  e.category = t["category"].value_or(std::string());
  e.detected_by = t["detected_by"].value_or(std::string());
  e.why = t["why"].value_or(std::string());
  e.known_gap = t["known_gap"].value_or(std::string());
  e.eval_args = e.raw_eval_args = t["eval_args"].value_or(std::string());
  for (size_t at; (at = e.eval_args.find("{dir}")) != std::string::npos;) e.eval_args.replace(at, 5, "'" + dir + "'");
  e.evidence_contains = t["evidence_contains"].value_or(std::string());
  e.message_contains = t["message_contains"].value_or(std::string());
  e.verdict = t["verdict"].value_or(std::string());
  e.min_candidate_median_s = t["min_candidate_median_s"].value_or(0.0);
  e.problem = t["problem"].value_or(std::string());
  return e;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Outcome {
  int exit_code = -1;
  nlohmann::json results;
  std::string log;
  std::set<std::string> violations, categories, verdicts, kinds;
  std::string summary;  // one line per op: verdict, violations, failure categories
};

// Runs `kernelgate eval DIR --seed 1 --out OUT` (KernelBench: `eval --problem PROBLEM
// DIR/solution.py ...`, PROBLEM the one expect.toml names), OUT under the build tree.
Outcome evaluate(const Corpus& c, const std::string& name, const std::string& dir, const Expect& e, const std::string& extra) {
  const std::string& kind = c.kind;
  Outcome o;
  const std::string out = std::string(KG_CORPUS_OUT) + "/" + kind + "/" + name;
  std::error_code ec;
  fs::remove_all(out, ec);
  fs::create_directories(out, ec);
  const std::string log = out + "/kernelgate.log";
  const std::string what =
      c.kernelbench() ? "--problem '" KG_CORPUS_DIR "/kernelbench-problems/" + e.problem + "' '" + dir + "/solution.py'" : "'" + dir + "'";
  const std::string cmd = "'" KG_BINARY "' eval " + what + " --seed 1 " + extra + " --out '" + out + "' > '" + log + "' 2>&1";
  const int status = std::system(cmd.c_str());
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.log = read_file(log);
  std::ifstream in(out + "/results.json");
  if (!in) return o;
  try {
    in >> o.results;
  } catch (const std::exception& e) {
    o.summary = std::string("results.json unreadable: ") + e.what();
    return o;
  }
  for (const auto& op : o.results.value("ops", nlohmann::json::array())) {
    std::string line = op.value("op", "?") + ": " + op.value("verdict", "?");
    o.verdicts.insert(op.value("verdict", "?"));
    o.kinds.insert(op.value("kind", "?"));
    for (const auto& v : op.value("violations", nlohmann::json::array())) {
      o.violations.insert(v.value("rule", "?"));
      line += " [violation " + v.value("rule", "?") + ": " + v.value("evidence", nlohmann::json()).dump().substr(0, 300) + "]";
    }
    for (const auto& f : op.value("failures", nlohmann::json::array())) {
      o.categories.insert(f.value("category", "?"));
      line += " [failure " + f.value("category", "?") + "]";
    }
    if (op.contains("error") && op["error"].is_string() && !op["error"].get<std::string>().empty())
      line += " [error " + op["error"].get<std::string>().substr(0, 300) + "]";
    o.summary += line + "\n";
  }
  return o;
}

// Whether an op's `list` (violations, failures) has an element with `key` == `value` whose
// `evidence` holds `contains` (when set).
bool any_with(const nlohmann::json& results, const char* list, const char* key, const std::string& value, const std::string& contains) {
  for (const auto& op : results.value("ops", nlohmann::json::array()))
    for (const auto& item : op.value(list, nlohmann::json::array())) {
      if (item.value(key, "") != value) continue;
      if (contains.empty() || item.value("evidence", nlohmann::json()).dump().find(contains) != std::string::npos) return true;
    }
  return false;
}

std::string tail(const std::string& s, size_t n = 3000) { return s.size() > n ? s.substr(s.size() - n) : s; }

// What an entry is, for a failing test's message.
std::string describe(const Corpus& c, const std::string& name, const Expect& e) {
  switch (c.judged) {
    case Judged::AsExpectSays:
    case Judged::Caught:
      return std::string(c.kernelbench()          ? "KernelBench exploit "
                         : c.cuda()               ? "cuda exploit "
                         : c.lang == Lang::Python ? "python exploit "
                                                  : "exploit ") +
             name + " (expected rule " + e.rule + ", detected_by " + e.detected_by + ": " + e.why + ")";
    case Judged::Passes:
      return std::string(c.kernelbench()          ? "legit KernelBench solution "
                         : c.cuda()               ? "legit cuda kernel "
                         : c.lang == Lang::Python ? "legit python kernel "
                                                  : "legit kernel ") +
             name;
    case Judged::FailsHonestly: return "buggy kernel " + name + " (expected category " + e.category + ": " + e.why + ")";
  }
  return name;
}

// An exploit must exit 1 and name its expected rule; an honest kernel must exit 0, every op
// passing and no violation at all; a buggy kernel must exit 1, every op `fail` with its expected
// category among the failures, and no violation at all.
void check_outcome(const Corpus& c, const Expect& e, const Outcome& o, const std::string& context) {
  switch (c.judged) {
    case Judged::Caught: {
      EXPECT_EQ(o.exit_code, 1) << context;
      const bool named = o.violations.count(e.rule) > 0 || (e.rule == "input_mutated" && o.categories.count(e.rule) > 0);
      EXPECT_TRUE(named) << "rule " << e.rule << " not reported\n" << context;
      break;
    }
    case Judged::Passes:
      EXPECT_EQ(o.exit_code, 0) << context;
      EXPECT_TRUE(o.violations.empty()) << context;
      EXPECT_EQ(o.verdicts, std::set<std::string>{"pass"}) << context;
      if (c.python()) EXPECT_EQ(o.kinds, std::set<std::string>{"python"}) << context;
      break;
    case Judged::AsExpectSays: {
      EXPECT_FALSE(o.verdicts.empty()) << context;
      EXPECT_EQ(o.exit_code, e.verdict == "pass" ? 0 : 1) << context;
      if (e.has_rule)
        EXPECT_TRUE(any_with(o.results, "violations", "rule", e.rule, e.evidence_contains)) << "rule " << e.rule << " not reported\n"
                                                                                            << context;
      if (!e.category.empty())
        EXPECT_TRUE(any_with(o.results, "failures", "category", e.category, e.message_contains))
            << "category " << e.category << " not among the failures\n"
            << context;
      if (!e.verdict.empty()) EXPECT_EQ(o.verdicts, std::set<std::string>{e.verdict}) << context;
      if (e.min_candidate_median_s > 0) {
        size_t timed = 0;
        for (const auto& op : o.results.value("ops", nlohmann::json::array()))
          for (const auto& t : op.value("timing", nlohmann::json::array())) {
            if (!t.contains("candidate_median_s") || !t["candidate_median_s"].is_number()) continue;
            ++timed;
            EXPECT_GE(t["candidate_median_s"].get<double>(), e.min_candidate_median_s) << t.dump() << "\n" << context;
          }
        EXPECT_GT(timed, 0u) << "no timed sample\n" << context;
      }
      break;
    }
    case Judged::FailsHonestly:
      EXPECT_EQ(o.exit_code, 1) << context;
      EXPECT_TRUE(o.violations.empty()) << "an honest bug was accused of cheating\n" << context;
      EXPECT_EQ(o.verdicts, std::set<std::string>{"fail"}) << context;
      EXPECT_TRUE(o.categories.count(e.category)) << "category " << e.category << " not among the failures\n" << context;
      break;
  }
}

// The cuda kinds run on cuda:0 where there is a GPU; without one the static exploits are still
// built (nvcc) and inspected, so their violation stands although the launch fails, while the
// dynamic ones and the honest kernels need the device.
void check_entry(const Corpus& c, const std::string& name) {
  const std::string dir = c.root() + "/" + name;
  const Expect e = read_expect(dir);
  if (!e.known_gap.empty()) GTEST_SKIP() << "known gap, not caught yet (" << e.rule << "): " << e.known_gap;
  if (c.python()) {
    if (const std::string missing = python_kind_missing(); !missing.empty())
      GTEST_SKIP() << "the python kind is unavailable (" << missing << ")";
  }
  if (c.cuda()) {
    if (const std::string missing = kg::e2e::cuda_kind_missing(); !missing.empty())
      GTEST_SKIP() << "the cuda kind is unavailable (" << missing << "): judged where the CUDA toolkit is";
  }
  if (c.cuda() && !have_gpu()) {
    if (!c.exploit()) GTEST_SKIP() << "an honest cuda kernel is judged on a GPU (tools/gpu-check); no GPU here";
    if (e.detected_by != "static") GTEST_SKIP() << "caught at run time on a GPU (tools/gpu-check); no GPU here";
  }
  const Outcome o = evaluate(c, name, dir, e, e.eval_args + (c.cuda() && have_gpu() ? " --device cuda" : ""));
  check_outcome(c, e, o, describe(c, name, e) + "\n" + o.summary + "--- kernelgate output (tail) ---\n" + tail(o.log));
}

// One suite per corpus, named as tools/gpu-check's filter and ctest expect.
class ExploitCorpus : public ::testing::TestWithParam<std::string> {};
class LegitCorpus : public ::testing::TestWithParam<std::string> {};
class BuggyCorpus : public ::testing::TestWithParam<std::string> {};
class CudaExploitCorpus : public ::testing::TestWithParam<std::string> {};
class CudaLegitCorpus : public ::testing::TestWithParam<std::string> {};
class PythonLegitCorpus : public ::testing::TestWithParam<std::string> {};
class PythonExploitCorpus : public ::testing::TestWithParam<std::string> {};
class PythonCudaLegitCorpus : public ::testing::TestWithParam<std::string> {};
class PythonCudaExploitCorpus : public ::testing::TestWithParam<std::string> {};
class KernelBenchLegitCorpus : public ::testing::TestWithParam<std::string> {};
class KernelBenchBuggyCorpus : public ::testing::TestWithParam<std::string> {};
class KernelBenchExploitCorpus : public ::testing::TestWithParam<std::string> {};
class KernelBenchCudaLegitCorpus : public ::testing::TestWithParam<std::string> {};
class KernelBenchCudaExploitCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(ExploitCorpus, CaughtByItsRule) { check_entry(kExploitCorpus, GetParam()); }
TEST_P(LegitCorpus, PassesWithNoViolation) { check_entry(kLegitCorpus, GetParam()); }
TEST_P(BuggyCorpus, FailsWithItsCategoryAndNoViolation) { check_entry(kBuggyCorpus, GetParam()); }
TEST_P(CudaExploitCorpus, CaughtByItsRule) { check_entry(kCudaExploitCorpus, GetParam()); }
TEST_P(CudaLegitCorpus, PassesWithNoViolation) { check_entry(kCudaLegitCorpus, GetParam()); }
TEST_P(PythonLegitCorpus, PassesWithNoViolation) { check_entry(kPythonLegitCorpus, GetParam()); }
TEST_P(PythonExploitCorpus, EndsAsItsExpectSays) { check_entry(kPythonExploitCorpus, GetParam()); }
TEST_P(PythonCudaLegitCorpus, PassesWithNoViolation) { check_entry(kPythonCudaLegitCorpus, GetParam()); }
TEST_P(PythonCudaExploitCorpus, EndsAsItsExpectSays) { check_entry(kPythonCudaExploitCorpus, GetParam()); }
TEST_P(KernelBenchLegitCorpus, PassesWithNoViolation) { check_entry(kKernelBenchLegitCorpus, GetParam()); }
TEST_P(KernelBenchBuggyCorpus, FailsWithItsCategoryAndNoViolation) { check_entry(kKernelBenchBuggyCorpus, GetParam()); }
TEST_P(KernelBenchExploitCorpus, EndsAsItsExpectSays) { check_entry(kKernelBenchExploitCorpus, GetParam()); }
TEST_P(KernelBenchCudaLegitCorpus, PassesWithNoViolation) { check_entry(kKernelBenchCudaLegitCorpus, GetParam()); }
TEST_P(KernelBenchCudaExploitCorpus, EndsAsItsExpectSays) { check_entry(kKernelBenchCudaExploitCorpus, GetParam()); }

std::string param_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Dirs, ExploitCorpus, ::testing::ValuesIn(corpus(kExploitCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, LegitCorpus, ::testing::ValuesIn(corpus(kLegitCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, BuggyCorpus, ::testing::ValuesIn(corpus(kBuggyCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, CudaExploitCorpus, ::testing::ValuesIn(corpus(kCudaExploitCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, CudaLegitCorpus, ::testing::ValuesIn(corpus(kCudaLegitCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, PythonLegitCorpus, ::testing::ValuesIn(corpus(kPythonLegitCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, PythonExploitCorpus, ::testing::ValuesIn(corpus(kPythonExploitCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, PythonCudaLegitCorpus, ::testing::ValuesIn(corpus(kPythonCudaLegitCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, PythonCudaExploitCorpus, ::testing::ValuesIn(corpus(kPythonCudaExploitCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, KernelBenchLegitCorpus, ::testing::ValuesIn(corpus(kKernelBenchLegitCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, KernelBenchBuggyCorpus, ::testing::ValuesIn(corpus(kKernelBenchBuggyCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, KernelBenchExploitCorpus, ::testing::ValuesIn(corpus(kKernelBenchExploitCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, KernelBenchCudaLegitCorpus, ::testing::ValuesIn(corpus(kKernelBenchCudaLegitCorpus)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, KernelBenchCudaExploitCorpus, ::testing::ValuesIn(corpus(kKernelBenchCudaExploitCorpus)), param_name);

// An entry's expect.toml: exploits name a known rule and how it is detected, legit entries an
// empty rule, buggy entries no rule but a known failure category that is not also a rule
// (input_mutated is raised as one); every `{dir}/FILE` its eval_args name exists.
void check_expect(const Corpus& c, const std::string& dir, const Expect& e, std::set<std::string>* covered) {
  const auto& known = kg::policy::known_rules();
  switch (c.judged) {
    case Judged::Caught:
      EXPECT_NE(std::find(known.begin(), known.end(), e.rule), known.end()) << dir << ": unknown rule " << e.rule;
      EXPECT_TRUE(e.detected_by == "static" || e.detected_by == "dynamic") << dir << ": detected_by " << e.detected_by;
      covered->insert(e.rule);
      break;
    case Judged::Passes: EXPECT_EQ(e.rule, "") << dir; break;
    case Judged::AsExpectSays:
      EXPECT_TRUE(e.has_rule || !e.category.empty() || !e.verdict.empty()) << dir << ": expect.toml says nothing to check";
      if (e.has_rule) {
        EXPECT_NE(std::find(known.begin(), known.end(), e.rule), known.end()) << dir << ": unknown rule " << e.rule;
        covered->insert(e.rule);
      }
      if (!e.category.empty()) EXPECT_TRUE(kg::policy::category_from_id(e.category).has_value()) << dir << ": unknown category";
      if (!e.verdict.empty()) EXPECT_EQ(e.verdict, "pass") << dir << ": verdict may only say pass";
      break;
    case Judged::FailsHonestly:
      EXPECT_FALSE(e.has_rule) << dir << ": a buggy entry names no rule";
      EXPECT_TRUE(kg::policy::category_from_id(e.category).has_value()) << dir << ": unknown category '" << e.category << "'";
      EXPECT_EQ(std::find(known.begin(), known.end(), e.category), known.end()) << dir << ": " << e.category << " is also a rule";
      break;
  }
  EXPECT_FALSE(e.why.empty()) << dir;
  for (size_t at = e.raw_eval_args.find("{dir}/"); at != std::string::npos; at = e.raw_eval_args.find("{dir}/", at + 1)) {
    const size_t from = at + 6, to = e.raw_eval_args.find_first_of(" '\"", from);
    const std::string file = e.raw_eval_args.substr(from, to == std::string::npos ? std::string::npos : to - from);
    EXPECT_TRUE(fs::is_regular_file(dir + "/" + file)) << dir << ": eval_args names a missing file " << file;
  }
}

// Each op folder holds `<folder>/<folder>_implementation.cpp` (`.cu` in the cuda corpora; in the
// python corpora one or more `<folder>_implementation*.py`, BackendBench's `_v1` suffixes
// included) that starts with a comment; a buggy entry's comment starts `// BUG (<category>)`.
void check_sources(const Corpus& c, const std::string& dir, const Expect& e) {
  if (c.kernelbench()) {
    // The problem it names (the reference) and solution.py (the candidate), each opening with a comment.
    EXPECT_FALSE(e.problem.empty()) << dir << ": expect.toml names no problem";
    for (const std::string& src : {KG_CORPUS_DIR "/kernelbench-problems/" + e.problem, dir + "/solution.py"}) {
      ASSERT_TRUE(fs::is_regular_file(src)) << src;
      const std::string text = read_file(src);
      EXPECT_EQ(text.rfind("#", 0), 0u) << src << " must start with a comment explaining it";
      if (c.judged == Judged::FailsHonestly && src == dir + "/solution.py")
        EXPECT_EQ(text.rfind("# BUG (" + e.category + ")", 0), 0u) << src << " must start with # BUG (" << e.category << "): the bug";
    }
    return;
  }
  int ops = 0;
  for (const auto& f : fs::directory_iterator(dir)) {
    if (!f.is_directory()) continue;
    const std::string folder = f.path().filename().string();
    std::vector<std::string> sources;
    if (c.lang == Lang::Python || c.lang == Lang::PythonCuda) {
      for (const auto& s : fs::directory_iterator(f.path())) {
        const std::string file = s.path().filename().string();
        if (file.rfind(folder + "_implementation", 0) == 0 && s.path().extension() == ".py") sources.push_back(s.path().string());
      }
      ASSERT_FALSE(sources.empty()) << f.path() << ": no " << folder << "_implementation*.py";
    } else {
      sources.push_back(f.path().string() + "/" + folder + "_implementation" + (c.cuda() ? ".cu" : ".cpp"));
      ASSERT_TRUE(fs::exists(sources.back())) << sources.back();
    }
    const std::string comment = c.lang == Lang::Python || c.lang == Lang::PythonCuda ? "#" : "//";
    for (const auto& src : sources) {
      const std::string text = read_file(src);
      EXPECT_EQ(text.rfind(comment, 0), 0u) << src << " must start with a comment explaining it";
      if (c.judged == Judged::FailsHonestly) {
        EXPECT_EQ(text.rfind("// BUG (" + e.category + ")", 0), 0u) << src << " must start with // BUG (" << e.category << "): the bug";
      }
    }
    ops++;
  }
  EXPECT_GE(ops, 1) << dir;
}

// The corpora's own shape: enough entries, each a submission with at least one op folder and an
// expect.toml as check_expect says, and every rule covered by an exploit.
TEST(CorpusLayout, SizesRulesAndHeaders) {
  EXPECT_GE(corpus(kExploitCorpus).size(), 30u);
  EXPECT_GE(corpus(kLegitCorpus).size(), 30u);
  EXPECT_GE(corpus(kBuggyCorpus).size(), 25u);
  EXPECT_GE(corpus(kPythonLegitCorpus).size(), 6u);
  EXPECT_GE(corpus(kPythonExploitCorpus).size(), 18u);
  EXPECT_GE(corpus(kPythonCudaLegitCorpus).size(), 3u);
  EXPECT_GE(corpus(kPythonCudaExploitCorpus).size(), 2u);
  EXPECT_GE(corpus(kKernelBenchLegitCorpus).size(), 6u);
  EXPECT_GE(corpus(kKernelBenchBuggyCorpus).size(), 3u);
  EXPECT_GE(corpus(kKernelBenchExploitCorpus).size(), 10u);
  EXPECT_GE(corpus(kKernelBenchCudaLegitCorpus).size(), 3u);
  EXPECT_GE(corpus(kKernelBenchCudaExploitCorpus).size(), 3u);
  std::set<std::string> covered, covered_cuda, covered_python;
  std::set<std::string> covered_kernelbench;
  for (const Corpus* c :
       {&kExploitCorpus, &kLegitCorpus, &kBuggyCorpus, &kCudaExploitCorpus, &kCudaLegitCorpus, &kPythonLegitCorpus, &kPythonExploitCorpus,
        &kPythonCudaLegitCorpus, &kPythonCudaExploitCorpus, &kKernelBenchLegitCorpus, &kKernelBenchBuggyCorpus, &kKernelBenchExploitCorpus,
        &kKernelBenchCudaLegitCorpus, &kKernelBenchCudaExploitCorpus}) {
    for (const auto& n : corpus(*c)) {
      const std::string dir = c->root() + "/" + n;
      ASSERT_TRUE(fs::exists(dir + "/expect.toml")) << dir;
      const Expect e = read_expect(dir);
      check_expect(*c, dir, e,
                   c->kernelbench()          ? &covered_kernelbench
                   : c->cuda()               ? &covered_cuda
                   : c->lang == Lang::Python ? &covered_python
                                             : &covered);
      check_sources(*c, dir, e);
    }
  }
  // Every section-B rule that applies to the cpu kind has at least one exploit.
  for (const char* rule : {"fallback_to_torch", "forbidden_library", "trivial_output", "unwritten_output", "input_mutated",
                           "replayed_output", "stateful_output", "nondeterministic_output", "async_escape", "impossible_speed",
                           "timer_tampering", "cache_tampering", "shape_specialisation", "protocol_violation"})
    EXPECT_TRUE(covered.count(rule)) << "no exploit for " << rule;
  // The GPU cheats, in the cuda kind: a kernel that is never launched, work escaping the timed
  // stream, the device's persisting L2, and the ones that matter most again on the device.
  for (const char* rule : {"no_device_work", "async_escape", "cache_tampering", "fallback_to_torch", "timer_tampering", "replayed_output"})
    EXPECT_TRUE(covered_cuda.count(rule)) << "no cuda exploit for " << rule;
  // The runner-side rules sit below Python: each is shown catching a python kernel.
  for (const char* rule : {"fallback_to_torch", "replayed_output", "unwritten_output", "async_escape"})
    EXPECT_TRUE(covered_python.count(rule)) << "no python exploit for " << rule;
  // KernelBench's own adversarial cheats: PyTorch wrapping, result reuse, thread injection.
  for (const char* rule : {"fallback_to_torch", "replayed_output", "async_escape"})
    EXPECT_TRUE(covered_kernelbench.count(rule)) << "no KernelBench exploit for " << rule;
}

}  // namespace

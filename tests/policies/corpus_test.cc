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
// CorpusLayout: the corpora themselves (sizes, layout, expect.toml, header comments).
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

#include "kernelgate/policy.h"

namespace fs = std::filesystem;

namespace {

const std::string kExploits = KG_CORPUS_DIR "/exploits";
const std::string kLegit = KG_CORPUS_DIR "/legit";
const std::string kExploitsCuda = KG_CORPUS_DIR "/exploits-cuda";
const std::string kLegitCuda = KG_CORPUS_DIR "/legit-cuda";

// The cuda corpora launch only where the NVIDIA driver is present (tools/gpu-check runs them).
bool have_gpu() {
  std::error_code ec;
  return fs::exists("/dev/nvidiactl", ec);
}

std::vector<std::string> corpus(const std::string& root) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Expect {
  std::string rule, detected_by, why;
  // Set for an exploit kernelgate does not catch yet: the test is skipped with this reason, so
  // the gap stays listed (and visible in every test run) instead of silently passing.
  std::string known_gap;
};

Expect read_expect(const std::string& dir) {
  Expect e;
  const toml::table t = toml::parse_file(dir + "/expect.toml");
  e.rule = t["rule"].value_or(std::string("<missing>"));
  e.detected_by = t["detected_by"].value_or(std::string());
  e.why = t["why"].value_or(std::string());
  e.known_gap = t["known_gap"].value_or(std::string());
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
  std::set<std::string> violations, categories, verdicts;
  std::string summary;  // one line per op: verdict, violations, failure categories
};

// Runs `kernelgate eval DIR --seed 1 --out OUT`, OUT under the build tree.
Outcome evaluate(const std::string& kind, const std::string& name, const std::string& dir, const std::string& extra = "") {
  Outcome o;
  const std::string out = std::string(KG_CORPUS_OUT) + "/" + kind + "/" + name;
  std::error_code ec;
  fs::remove_all(out, ec);
  fs::create_directories(out, ec);
  const std::string log = out + "/kernelgate.log";
  const std::string cmd = "'" KG_BINARY "' eval '" + dir + "' --seed 1 " + extra + " --out '" + out + "' > '" + log + "' 2>&1";
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

std::string tail(const std::string& s, size_t n = 3000) { return s.size() > n ? s.substr(s.size() - n) : s; }

class ExploitCorpus : public ::testing::TestWithParam<std::string> {};
class LegitCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(ExploitCorpus, CaughtByItsRule) {
  const std::string dir = kExploits + "/" + GetParam();
  const Expect e = read_expect(dir);
  if (!e.known_gap.empty()) GTEST_SKIP() << "known gap, not caught yet (" << e.rule << "): " << e.known_gap;
  const Outcome o = evaluate("exploits", GetParam(), dir);
  const std::string context = "exploit " + GetParam() + " (expected rule " + e.rule + ", detected_by " + e.detected_by +
                              ": " + e.why + ")\n" + o.summary + "--- kernelgate output (tail) ---\n" + tail(o.log);
  EXPECT_EQ(o.exit_code, 1) << context;
  const bool named = o.violations.count(e.rule) > 0 || (e.rule == "input_mutated" && o.categories.count(e.rule) > 0);
  EXPECT_TRUE(named) << "rule " << e.rule << " not reported\n" << context;
}

TEST_P(LegitCorpus, PassesWithNoViolation) {
  const std::string dir = kLegit + "/" + GetParam();
  const Outcome o = evaluate("legit", GetParam(), dir);
  const std::string context = "legit kernel " + GetParam() + "\n" + o.summary + "--- kernelgate output (tail) ---\n" + tail(o.log);
  EXPECT_EQ(o.exit_code, 0) << context;
  EXPECT_TRUE(o.violations.empty()) << context;
  EXPECT_EQ(o.verdicts, std::set<std::string>{"pass"}) << context;
}

// The cuda kind: without a GPU, the static exploits are still built (nvcc) and inspected, so
// their violation stands although the launch fails; the dynamic ones and the honest kernels need
// the device.
class CudaExploitCorpus : public ::testing::TestWithParam<std::string> {};
class CudaLegitCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaExploitCorpus, CaughtByItsRule) {
  const std::string dir = kExploitsCuda + "/" + GetParam();
  const Expect e = read_expect(dir);
  if (!e.known_gap.empty()) GTEST_SKIP() << "known gap, not caught yet (" << e.rule << "): " << e.known_gap;
  if (e.detected_by != "static" && !have_gpu()) GTEST_SKIP() << "caught at run time on a GPU (tools/gpu-check); no GPU here";
  const Outcome o = evaluate("exploits-cuda", GetParam(), dir, have_gpu() ? "--device cuda" : "");
  const std::string context = "cuda exploit " + GetParam() + " (expected rule " + e.rule + ", detected_by " + e.detected_by +
                              ": " + e.why + ")\n" + o.summary + "--- kernelgate output (tail) ---\n" + tail(o.log);
  EXPECT_EQ(o.exit_code, 1) << context;
  EXPECT_TRUE(o.violations.count(e.rule) > 0) << "rule " << e.rule << " not reported\n" << context;
}

TEST_P(CudaLegitCorpus, PassesWithNoViolation) {
  if (!have_gpu()) GTEST_SKIP() << "an honest cuda kernel is judged on a GPU (tools/gpu-check); no GPU here";
  const std::string dir = kLegitCuda + "/" + GetParam();
  const Outcome o = evaluate("legit-cuda", GetParam(), dir, "--device cuda");
  const std::string context = "legit cuda kernel " + GetParam() + "\n" + o.summary + "--- kernelgate output (tail) ---\n" + tail(o.log);
  EXPECT_EQ(o.exit_code, 0) << context;
  EXPECT_TRUE(o.violations.empty()) << context;
  EXPECT_EQ(o.verdicts, std::set<std::string>{"pass"}) << context;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Dirs, ExploitCorpus, ::testing::ValuesIn(corpus(kExploits)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, LegitCorpus, ::testing::ValuesIn(corpus(kLegit)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, CudaExploitCorpus, ::testing::ValuesIn(corpus(kExploitsCuda)), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, CudaLegitCorpus, ::testing::ValuesIn(corpus(kLegitCuda)), param_name);

// The corpora's own shape: enough entries, each a submission with at least one op folder
// holding `<folder>/<folder>_implementation.cpp` that starts with a comment, and an
// expect.toml whose rule is a known rule id (exploits) or empty (legit).
TEST(CorpusLayout, SizesRulesAndHeaders) {
  const auto exploits = corpus(kExploits), legit = corpus(kLegit);
  EXPECT_GE(exploits.size(), 30u);
  EXPECT_GE(legit.size(), 30u);
  const auto& known = kg::policy::known_rules();
  std::set<std::string> covered;
  for (const auto& [root, names, is_exploit] : {std::make_tuple(kExploits, exploits, true), std::make_tuple(kLegit, legit, false)}) {
    for (const auto& n : names) {
      const std::string dir = root + "/" + n;
      ASSERT_TRUE(fs::exists(dir + "/expect.toml")) << dir;
      const Expect e = read_expect(dir);
      if (is_exploit) {
        EXPECT_NE(std::find(known.begin(), known.end(), e.rule), known.end()) << dir << ": unknown rule " << e.rule;
        EXPECT_TRUE(e.detected_by == "static" || e.detected_by == "dynamic") << dir << ": detected_by " << e.detected_by;
        covered.insert(e.rule);
      } else {
        EXPECT_EQ(e.rule, "") << dir;
      }
      EXPECT_FALSE(e.why.empty()) << dir;
      int ops = 0;
      for (const auto& f : fs::directory_iterator(dir)) {
        if (!f.is_directory()) continue;
        const std::string folder = f.path().filename().string();
        const std::string src = f.path().string() + "/" + folder + "_implementation.cpp";
        ASSERT_TRUE(fs::exists(src)) << src;
        EXPECT_EQ(read_file(src).rfind("//", 0), 0u) << src << " must start with a comment explaining it";
        ops++;
      }
      EXPECT_GE(ops, 1) << dir;
    }
  }
  // Every section-B rule that applies to the cpu kind has at least one exploit.
  for (const char* rule : {"fallback_to_torch", "forbidden_library", "trivial_output", "unwritten_output", "input_mutated",
                           "replayed_output", "stateful_output", "nondeterministic_output", "async_escape",
                           "impossible_speed", "timer_tampering", "cache_tampering", "shape_specialisation",
                           "protocol_violation"})
    EXPECT_TRUE(covered.count(rule)) << "no exploit for " << rule;
}

}  // namespace

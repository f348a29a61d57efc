// PythonLegitCorpus, PythonExploitCorpus: tests/legit-python/ and tests/exploits-python/ through
// the real binary (`kernelgate eval DIR --seed 1`), one ctest entry per directory.
//
// Every legit entry must exit 0, every op passing, no violation. An exploit entry's expect.toml
// says how it must end, by any of:
//   rule = "..."                    a violation of that rule (the op rejected, exit 1)
//   evidence_contains = "..."       ... whose evidence holds this text
//   category = "..."                a failure of that category (exit 1)
//   message_contains = "..."        ... whose evidence holds this text (a traceback, a refusal)
//   verdict = "pass"                the attempt changes nothing: the op passes (exit 0)
//   min_candidate_median_s = S      ... and every timed sample's candidate median is at least S
// `why` says what the entry tries.
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

namespace fs = std::filesystem;

namespace {

std::vector<std::string> entries(const std::string& corpus) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(std::string(KG_CORPUS_DIR) + "/" + corpus, ec))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Expect {
  std::string rule, evidence_contains, category, message_contains, verdict, why;
  double min_candidate_median_s = 0;
};

Expect read_expect(const std::string& dir) {
  const toml::table t = toml::parse_file(dir + "/expect.toml");
  Expect e;
  e.rule = t["rule"].value_or(std::string());
  e.evidence_contains = t["evidence_contains"].value_or(std::string());
  e.category = t["category"].value_or(std::string());
  e.message_contains = t["message_contains"].value_or(std::string());
  e.verdict = t["verdict"].value_or(std::string());
  e.why = t["why"].value_or(std::string());
  e.min_candidate_median_s = t["min_candidate_median_s"].value_or(0.0);
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
  nlohmann::json ops = nlohmann::json::array();
  std::string log;
};

Outcome evaluate(const std::string& corpus, const std::string& name) {
  const std::string dir = std::string(KG_CORPUS_DIR) + "/" + corpus + "/" + name;
  const std::string out = std::string(KG_CORPUS_OUT) + "/" + corpus + "/" + name;
  std::error_code ec;
  fs::remove_all(out, ec);
  fs::create_directories(out, ec);
  const std::string cmd = "'" KG_BINARY "' eval '" + dir + "' --seed 1 --out '" + out + "' > '" + out + "/kernelgate.log' 2>&1";
  const int status = std::system(cmd.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.log = read_file(out + "/kernelgate.log");
  try {
    o.ops = nlohmann::json::parse(read_file(out + "/results.json")).value("ops", nlohmann::json::array());
  } catch (const std::exception& e) { o.log += std::string("\nresults.json unreadable: ") + e.what(); }
  return o;
}

// Whether any element of the ops' `list` (violations, failures) has `key` == `value` and, when
// `contains` is set, a `text_key` holding it.
bool any_with(const nlohmann::json& ops, const char* list, const char* key, const std::string& value, const char* text_key,
              const std::string& contains) {
  for (const auto& op : ops)
    for (const auto& item : op.value(list, nlohmann::json::array())) {
      if (item.value(key, "") != value) continue;
      if (contains.empty() || item.value(text_key, nlohmann::json()).dump().find(contains) != std::string::npos) return true;
    }
  return false;
}

std::string context(const std::string& name, const Expect& e, const Outcome& o) {
  const std::string log = o.log.size() > 4000 ? o.log.substr(o.log.size() - 4000) : o.log;
  return name + " (" + e.why + ")\n" + o.ops.dump(1).substr(0, 6000) + "\n--- kernelgate output (tail) ---\n" + log;
}

class PythonLegitCorpus : public ::testing::TestWithParam<std::string> {};
class PythonExploitCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(PythonLegitCorpus, PassesWithNoViolation) {
  const Expect e = read_expect(std::string(KG_CORPUS_DIR) + "/legit-python/" + GetParam());
  const Outcome o = evaluate("legit-python", GetParam());
  const std::string ctx = context(GetParam(), e, o);
  EXPECT_EQ(o.exit_code, 0) << ctx;
  ASSERT_FALSE(o.ops.empty()) << ctx;
  for (const auto& op : o.ops) {
    EXPECT_EQ(op.value("kind", ""), "python") << ctx;
    EXPECT_EQ(op.value("verdict", ""), "pass") << ctx;
    EXPECT_TRUE(op.value("violations", nlohmann::json::array()).empty()) << ctx;
  }
}

TEST_P(PythonExploitCorpus, EndsAsItsExpectSays) {
  const Expect e = read_expect(std::string(KG_CORPUS_DIR) + "/exploits-python/" + GetParam());
  ASSERT_TRUE(!e.rule.empty() || !e.category.empty() || !e.verdict.empty()) << GetParam() << ": expect.toml says nothing to check";
  ASSERT_FALSE(e.why.empty()) << GetParam();
  const Outcome o = evaluate("exploits-python", GetParam());
  const std::string ctx = context(GetParam(), e, o);
  ASSERT_FALSE(o.ops.empty()) << ctx;
  EXPECT_EQ(o.exit_code, e.verdict == "pass" ? 0 : 1) << ctx;
  if (!e.rule.empty()) { EXPECT_TRUE(any_with(o.ops, "violations", "rule", e.rule, "evidence", e.evidence_contains)) << ctx; }
  if (!e.category.empty()) { EXPECT_TRUE(any_with(o.ops, "failures", "category", e.category, "evidence", e.message_contains)) << ctx; }
  if (!e.verdict.empty()) {
    for (const auto& op : o.ops) EXPECT_EQ(op.value("verdict", ""), e.verdict) << ctx;
  }
  if (e.min_candidate_median_s > 0) {
    size_t timed = 0;
    for (const auto& op : o.ops)
      for (const auto& t : op.value("timing", nlohmann::json::array())) {
        if (!t.contains("candidate_median_s") || !t["candidate_median_s"].is_number()) continue;
        ++timed;
        EXPECT_GE(t["candidate_median_s"].get<double>(), e.min_candidate_median_s) << t.dump() << "\n" << ctx;
      }
    EXPECT_GT(timed, 0u) << "no timed sample\n" << ctx;
  }
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Dirs, PythonLegitCorpus, ::testing::ValuesIn(entries("legit-python")), param_name);
INSTANTIATE_TEST_SUITE_P(Dirs, PythonExploitCorpus, ::testing::ValuesIn(entries("exploits-python")), param_name);

}  // namespace

// The reports people read, through the real binary: --junit on eval, a batch and audit (read back
// with Python's XML parser, counts checked against results.json), OUT/summary.csv and summary.md
// of one submission, results.json against docs/schema/results.v1.schema.json (Debian's
// python3-jsonschema), and `kernelgate compare` on true and planted false claims.
#include "e2e_util.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kg::e2e;

namespace {

const std::string kSource = KG_SOURCE_DIR;
const std::string kSchema = kSource + "/docs/schema/results.v1.schema.json";

CommandResult validate(const std::vector<fs::path>& docs) {
  std::string cmd = "/usr/bin/python3 " + kSource + "/tests/e2e/validate_results_schema.py " + kSchema;
  for (const fs::path& d : docs) cmd += " " + d.string();
  return run_shell(cmd);
}

json junit_of(const fs::path& file) {
  const CommandResult r = run_shell("/usr/bin/python3 " + kSource + "/tests/e2e/junit_summary.py " + file.string());
  EXPECT_EQ(r.status, 0) << r.output;
  return r.status == 0 ? json::parse(r.output) : json::object();
}

// Every op of results.json against the testsuite's testcases of that op: a testcase per judged
// sample and per skipped one, the passed ones as many as results.json's tests.passed, each failing
// sample a failure of a category results.json has, each rule finding a failure naming its rule.
void expect_suite_matches_results(const json& suite, const json& results) {
  EXPECT_EQ(suite["attributes"], suite["counted"]) << suite.dump(1);
  for (const json& op : results["ops"]) {
    const std::string name = op["op"];
    std::set<std::string> categories, rules;
    for (const json& f : op["failures"]) categories.insert(f["category"].get<std::string>());
    for (const json& v : op["violations"]) rules.insert(v["rule"].get<std::string>());
    int samples = 0, passed = 0, rule_cases = 0;
    for (const json& c : suite["cases"]) {
      if (c["classname"] != name) continue;
      const std::string case_name = c["name"];
      if (case_name.rfind("sample ", 0) == 0 || case_name.rfind("skipped: ", 0) == 0) samples++;
      passed += c["outcome"] == "passed";
      if (c["outcome"] == "failure" && case_name.rfind("sample ", 0) == 0) {
        EXPECT_TRUE(categories.count(c["type"].get<std::string>())) << c.dump();
        EXPECT_EQ(c["message"].get<std::string>().rfind(c["type"].get<std::string>() + ": ", 0), 0u) << c.dump();
      }
      if (case_name.rfind("rule ", 0) == 0) {
        rule_cases++;
        EXPECT_TRUE(rules.count(case_name.substr(5))) << c.dump();
        EXPECT_EQ(c["type"], "rule:" + case_name.substr(5));
      }
    }
    EXPECT_EQ(samples, op["tests"]["total"].get<int>() + op["tests"]["skipped"].get<int>()) << name;
    EXPECT_EQ(passed, op["tests"]["passed"].get<int>()) << name;
    EXPECT_EQ(rule_cases, static_cast<int>(op["violations"].size())) << name;
  }
}

// The runs the tests read, each made once per process on first use (ctest runs every test in a
// process of its own, so a test pays only for the runs it reads): examples/buggy without timing,
// and two ops of examples/correct with timing (their speedups are what compare checks claims against).
class Reports : public ::testing::Test {
 protected:
  static const fs::path& root() {
    static const fs::path dir = temp_dir("reports");
    return dir;
  }
  static const CommandResult& buggy() {
    static const CommandResult r = run("eval " + kSource + "/examples/buggy --seed 7 --no-timing --junit " +
                                       (root() / "buggy.xml").string() + " --out " + (root() / "buggy").string());
    return r;
  }
  static const CommandResult& correct() {
    static const CommandResult r = run("eval " + kSource + "/examples/correct --ops relu.default,add.Tensor --seed 7 --junit " +
                                       (root() / "correct.xml").string() + " --out " + (root() / "correct").string());
    return r;
  }
};

TEST_F(Reports, JunitOfABuggyRunHasATestcasePerSampleWithTheFailuresOfResultsJson) {
  ASSERT_EQ(buggy().status, 1) << buggy().output;
  const json results = load_results(root() / "buggy");
  const json junit = junit_of(root() / "buggy.xml");
  ASSERT_EQ(junit["suites"].size(), 1u);
  const json& suite = junit["suites"][0];
  EXPECT_EQ(suite["name"], "buggy");
  EXPECT_EQ(junit["attributes"], suite["attributes"]);
  EXPECT_GE(std::stoi(suite["attributes"]["failures"].get<std::string>()), 3) << "one failing sample at least per buggy op";
  expect_suite_matches_results(suite, results);
  // The first failure's sample names its testcase, as results.json identifies it.
  const json& failure = results["ops"][0]["failures"][0];
  const std::string name = "sample " + failure["evidence"]["sample_index"].dump() + ": " + failure["evidence"]["sample"].get<std::string>();
  bool found = false;
  for (const json& c : suite["cases"]) found |= c["name"] == name && c["outcome"] == "failure";
  EXPECT_TRUE(found) << name << "\n" << suite.dump(1);
}

TEST_F(Reports, JunitOfACorrectRunPassesEverySampleAndSkipsWhatResultsJsonSkips) {
  ASSERT_EQ(correct().status, 0) << correct().output;
  const json results = load_results(root() / "correct");
  const json suite = junit_of(root() / "correct.xml")["suites"][0];
  EXPECT_EQ(suite["attributes"]["failures"], "0");
  EXPECT_EQ(suite["attributes"]["errors"], "0");
  expect_suite_matches_results(suite, results);
  int skipped_in_results = 0;
  for (const json& op : results["ops"]) skipped_in_results += op["tests"]["skipped"].get<int>();
  EXPECT_EQ(suite["attributes"]["skipped"], std::to_string(skipped_in_results));
}

TEST_F(Reports, OneSubmissionGetsTheBatchSummaryCsvAndMarkdown) {
  ASSERT_EQ(buggy().status, 1) << buggy().output;
  const json results = load_results(root() / "buggy");
  std::istringstream csv(read(root() / "buggy" / "summary.csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("submission,operator,kind,verdict,tests_total,tests_passed,correctness_rate,performance_tests,avg_speedup,"
                       "geomean_speedup,max_absolute_error,max_relative_error,",
                       0),
            0u)
      << line;
  std::map<std::string, std::string> rows;
  while (std::getline(csv, line)) {
    const size_t first = line.find(','), second = line.find(',', first + 1);
    rows[line.substr(first + 1, second - first - 1)] = line;
  }
  ASSERT_EQ(rows.size(), results["ops"].size());
  for (const json& op : results["ops"]) {
    const std::string prefix =
        "buggy," + op["op"].get<std::string>() + ",cpu,fail," + op["tests"]["total"].dump() + "," + op["tests"]["passed"].dump() + ",";
    EXPECT_EQ(rows[op["op"]].rfind(prefix, 0), 0u) << rows[op["op"]];
  }
  const std::string md = read(root() / "buggy" / "summary.md");
  EXPECT_EQ(md.rfind("# kernelgate summary\n", 0), 0u) << md;
  EXPECT_NE(md.find("| buggy | fail | 0/3 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| seed | 7 |"), std::string::npos) << md;
}

TEST_F(Reports, ResultsJsonOfEvalMeetsTheSchemaAndACorruptedOneIsRejectedNamingTheField) {
  ASSERT_EQ(buggy().status, 1) << buggy().output;
  ASSERT_EQ(correct().status, 0) << correct().output;
  const CommandResult ok = validate({root() / "buggy" / "results.json", root() / "correct" / "results.json"});
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("correct/results.json: valid"), std::string::npos) << ok.output;

  json corrupted = load_results(root() / "buggy");
  corrupted["ops"][1]["verdict"] = "passed";
  corrupted["summary"].erase("tests_total");
  write(root() / "corrupted.json", corrupted.dump());
  const CommandResult bad = validate({root() / "corrupted.json"});
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_NE(bad.output.find("invalid at /ops/1/verdict: 'passed' is not one of"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("invalid at /summary: 'tests_total' is a required property"), std::string::npos) << bad.output;
}

TEST_F(Reports, CompareHoldsTrueClaimsAndCatchesAPlantedFalseOne) {
  ASSERT_EQ(correct().status, 0) << correct().output;
  const fs::path a = root() / "correct";
  const json results = load_results(a);
  const json* relu = find_op(results, "relu.default");
  const json* add = find_op(results, "add.Tensor");
  ASSERT_TRUE(relu && add && (*relu)["speedup"].is_number() && (*add)["speedup"].is_number()) << results.dump(1);
  const double relu_speedup = (*relu)["speedup"], add_speedup = (*add)["speedup"];

  std::ostringstream truth;
  truth << "operator,verdict,speedup\naten.relu.default,pass," << relu_speedup * 0.95 << "\nadd.Tensor,pass,\n";
  write(root() / "true.csv", truth.str());
  const CommandResult holds = run("compare " + a.string() + " " + (root() / "true.csv").string());
  EXPECT_EQ(holds.status, 0) << holds.output;
  EXPECT_NE(holds.output.find("3 claims of B checked, 0 do not hold (speedup tolerance 10%)"), std::string::npos) << holds.output;

  const json claims = {{"kernelgate_claims", 1},
                       {"claims",
                        {{{"operator", "relu.default"}, {"verdict", "pass"}},
                         {{"operator", "add.Tensor"}, {"verdict", "pass"}, {"speedup", add_speedup * 1.5}}}}};
  write(root() / "false.json", claims.dump());
  const CommandResult caught =
      run("compare " + a.string() + " " + (root() / "false.json").string() + " --json " + (root() / "compare.json").string());
  EXPECT_EQ(caught.status, 1) << caught.output;
  EXPECT_NE(caught.output.find("add.Tensor: claimed speedup"), std::string::npos) << caught.output;
  const json machine = json::parse(read(root() / "compare.json"));
  EXPECT_EQ(machine["summary"]["claims_checked"], 3);
  EXPECT_EQ(machine["summary"]["claims_failed"], 1);
  EXPECT_EQ(machine["speedup_tolerance"], 0.1);
  // A tolerance wide enough for the planted claim lets it hold.
  EXPECT_EQ(run("compare " + a.string() + " " + (root() / "false.json").string() + " --speedup-tolerance 40%").status, 0);
}

TEST_F(Reports, CompareOfTwoRunsFailsTheClaimedPassesTheBuggyRunDoesNotHave) {
  ASSERT_EQ(buggy().status, 1) << buggy().output;
  ASSERT_EQ(correct().status, 0) << correct().output;
  const std::string buggy = (root() / "buggy" / "results.json").string(), correct = (root() / "correct").string();
  const CommandResult r = run("compare " + buggy + " " + correct);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("relu.default: claimed pass; A's verdict is fail"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3 ops, 2 verdict changes;"), std::string::npos) << r.output;
  EXPECT_EQ(run("compare " + correct + " " + correct).status, 0);
}

TEST_F(Reports, CompareRefusesBadUsageAndMalformedInputNamingTheFileAndField) {
  ASSERT_EQ(correct().status, 0) << correct().output;
  const std::string a = (root() / "correct").string();
  write(root() / "bad.csv", "operator,verdict,speedup\nrelu.default,pass,quick\n");
  const CommandResult bad = run("compare " + a + " " + (root() / "bad.csv").string());
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find((root() / "bad.csv").string() + ":2: speedup: not a number: 'quick'"), std::string::npos) << bad.output;
  json broken = load_results(root() / "correct");
  broken["ops"][0].erase("tests");
  write(root() / "broken.json", broken.dump());
  const CommandResult field = run("compare " + (root() / "broken.json").string() + " " + a);
  EXPECT_EQ(field.status, 2) << field.output;
  const std::string first_op = broken["ops"][0]["op"];
  EXPECT_NE(field.output.find("broken.json: ops[0] (" + first_op + "): tests: missing or not an object"), std::string::npos)
      << field.output;
  EXPECT_EQ(run("compare " + a).status, 2);
  EXPECT_EQ(run("compare " + a + " " + a + " --speedup-tolerance 2").status, 2);
  EXPECT_EQ(run("compare " + a + " " + (root() / "missing").string()).status, 2);
}

TEST(ReportsBatch, ABatchJunitHasOneTestsuitePerSubmissionAndItsResultsMeetTheSchema) {
  const fs::path root = temp_dir("reports-batch");
  for (const char* kind : {"correct", "buggy"}) {
    fs::create_directories(root / "batch" / kind);
    fs::copy(kSource + "/examples/" + kind + "/relu__default", root / "batch" / kind / "relu__default", fs::copy_options::recursive);
  }
  const CommandResult r = run("eval --batch " + (root / "batch").string() + " --out " + (root / "out").string() +
                                  " --no-timing --seed 5 --jobs 2 --junit " + (root / "batch.xml").string(),
                              600);
  ASSERT_EQ(r.status, 1) << r.output;
  const json junit = junit_of(root / "batch.xml");
  ASSERT_EQ(junit["suites"].size(), 2u) << junit.dump(1);
  std::map<std::string, json> suites;
  for (const json& s : junit["suites"]) suites[s["name"]] = s;
  ASSERT_TRUE(suites.count("correct") && suites.count("buggy")) << junit.dump(1);
  for (const auto& [name, suite] : suites) expect_suite_matches_results(suite, load_results(root / "out" / name));
  EXPECT_EQ(suites["correct"]["attributes"]["failures"], "0");
  EXPECT_NE(suites["buggy"]["attributes"]["failures"], "0");
  const CommandResult schema = validate({root / "out" / "correct" / "results.json", root / "out" / "buggy" / "results.json"});
  EXPECT_EQ(schema.status, 0) << schema.output;
}

TEST(ReportsAudit, AnAuditJunitNamesTheRuleFoundAndItsResultsMeetTheSchema) {
  const fs::path out = temp_dir("reports-audit");
  const CommandResult r = run("audit " + kSource + "/tests/exploits/fallback_at_relu --seed 3 --out " + (out / "audit").string() +
                              " --junit " + (out / "audit.xml").string());
  ASSERT_EQ(r.status, 1) << r.output;
  const json results = load_results(out / "audit");
  const json suite = junit_of(out / "audit.xml")["suites"][0];
  expect_suite_matches_results(suite, results);
  bool rule = false;
  for (const json& c : suite["cases"])
    rule |= c["name"] == "rule fallback_to_torch" && c["outcome"] == "failure" && c["type"] == "rule:fallback_to_torch" &&
            c["message"].get<std::string>().rfind("fallback_to_torch: ", 0) == 0;
  EXPECT_TRUE(rule) << suite.dump(1);
  const CommandResult schema = validate({out / "audit" / "results.json"});
  EXPECT_EQ(schema.status, 0) << schema.output;
}

}  // namespace

// JUnit XML from results.json documents (kernelgate/junit.h): testcases per op x sample named from
// the suite, failures with the category and one-line evidence, rule findings, skipped samples,
// errors, the counts, and the escaping of text from a submission.
#include "kernelgate/junit.h"
#include "merge_fixtures.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>

namespace kg::results {
namespace {

using testing::op_json;
using testing::results_json;
using testing::smoke_identity;

struct Case {
  std::string classname, name, outcome, type, message;  // outcome: passed, failure, error, skipped
};

std::string attribute(const std::string& element, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(element, m, std::regex(" " + name + "=\"([^\"]*)\""))) return "<none>";
  return m[1];
}

// The testcases of the document, read back from the XML text.
std::vector<Case> testcases(const std::string& xml) {
  std::vector<Case> out;
  const std::regex testcase("<testcase ([^>]*?)(/>|>([\\s\\S]*?)</testcase>)");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), testcase); it != std::sregex_iterator(); ++it) {
    const std::string head = " " + (*it)[1].str();
    const std::string inner = (*it)[3];
    Case c{attribute(head, "classname"), attribute(head, "name"), "passed", "", ""};
    for (const char* kind : {"failure", "error", "skipped"}) {
      std::smatch m;
      if (!std::regex_search(inner, m, std::regex(std::string("<") + kind + "([^>]*?)/?>"))) continue;
      c.outcome = kind;
      c.type = attribute(m[1], "type");
      c.message = attribute(m[1], "message");
    }
    out.push_back(c);
  }
  return out;
}

// The counts a <testsuite> element claims, by name.
std::map<std::string, std::string> suite_counts(const std::string& xml, const std::string& name) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(xml, m, std::regex("<testsuite name=\"" + name + "\"([^>]*)>"))) << xml;
  std::map<std::string, std::string> counts;
  for (const char* key : {"tests", "failures", "errors", "skipped", "time"}) counts[key] = attribute(m[1], key);
  return counts;
}

json with_sample(json failure, int index, const std::string& sample) {
  failure["evidence"]["sample_index"] = index;
  failure["evidence"]["sample"] = sample;
  return failure;
}

SampleCalls calls_of(std::map<std::string, std::vector<std::string>> calls) {
  return [calls](const std::string& op) { return calls.count(op) ? calls.at(op) : std::vector<std::string>{}; };
}

TEST(Junit, EverySampleIsATestcaseNamedFromTheSuiteAndSkippedSamplesSaySo) {
  json relu = op_json("relu.default", "pass", 3, 3, 1.5);
  relu["tests"]["skipped"] = 2;
  relu["skipped"] = json::array({{{"sample", "cnt: 1, ((T([4], f16),), {})"}, {"reason", "the reference cannot run f16 here"}},
                                 {{"sample", "cnt: 1, ((T([99], f32),), {})"}, {"reason", "traces.txt:3: no tensor can be built"}}});
  const json doc = results_json(smoke_identity(), "sub", json::array({relu}), 2.5);
  const std::vector<std::string> calls = {"cnt: 1, ((T([8], f32),), {})", "cnt: 1, ((T([2, 3], f32),), {})", "cnt: 1, ((T([4], f16),), {})",
                                          "cnt: 1, ((T([], f64),), {})"};
  const std::string xml = junit_xml({{"sub", doc}}, calls_of({{"relu.default", calls}}));
  const std::vector<Case> cases = testcases(xml);
  ASSERT_EQ(cases.size(), 5u) << xml;
  EXPECT_EQ(cases[0].name, "sample 0: cnt: 1, ((T([8], f32),), {})");
  EXPECT_EQ(cases[0].classname, "relu.default");
  EXPECT_EQ(cases[0].outcome, "passed");
  EXPECT_EQ(cases[1].outcome, "passed");
  EXPECT_EQ(cases[2].name, "sample 2: cnt: 1, ((T([4], f16),), {})");
  EXPECT_EQ(cases[2].outcome, "skipped");
  EXPECT_EQ(cases[2].message, "the reference cannot run f16 here");
  EXPECT_EQ(cases[3].outcome, "passed");
  EXPECT_EQ(cases[4].name, "skipped: cnt: 1, ((T([99], f32),), {})");
  EXPECT_EQ(cases[4].outcome, "skipped");
  const auto counts = suite_counts(xml, "sub");
  EXPECT_EQ(counts.at("tests"), "5");
  EXPECT_EQ(counts.at("failures"), "0");
  EXPECT_EQ(counts.at("errors"), "0");
  EXPECT_EQ(counts.at("skipped"), "2");
  EXPECT_EQ(counts.at("time"), "2.500");
  EXPECT_NE(xml.find("<property name=\"seed\" value=\"7\"/>"), std::string::npos);
}

TEST(Junit, AFailureCarriesTheCategoryAndOneLineOfEscapedEvidence) {
  json add = op_json("add.Tensor", "fail", 3, 2, std::nullopt, {}, {"value_mismatch"});
  add["failures"][0] = with_sample(add["failures"][0], 1, "cnt: 1, ((T([4], f32), T([4], f32)), {})");
  add["failures"][0]["evidence"]["message"] = "3 <of> 4 & \"more\"\x01\x7f\xc2\x85 differ\nsecond line";
  add["failures"][0]["evidence"]["first_mismatch"] = {{"index", {0, 2}}, {"expected", 1.5}, {"actual", "inf"}};
  const json doc = results_json(smoke_identity(), "sub", json::array({add}), 1);
  const std::string xml = junit_xml({{"sub", doc}}, nullptr);
  const std::vector<Case> cases = testcases(xml);
  ASSERT_EQ(cases.size(), 3u) << xml;  // named by index: the suite's samples are unknown here
  EXPECT_EQ(cases[0].name, "sample 0");
  EXPECT_EQ(cases[0].outcome, "passed");
  EXPECT_EQ(cases[1].name, "sample 1: cnt: 1, ((T([4], f32), T([4], f32)), {})");
  EXPECT_EQ(cases[1].outcome, "failure");
  EXPECT_EQ(cases[1].type, "value_mismatch");
  EXPECT_EQ(cases[1].message,
            "value_mismatch: 3 &lt;of&gt; 4 &amp; &quot;more&quot; differ [first mismatch at [0,2]: expected 1.5, got inf]");
  EXPECT_EQ(cases[2].outcome, "passed");
  // The body keeps the whole evidence, line breaks included, and no control character.
  EXPECT_NE(xml.find("differ\nsecond line"), std::string::npos);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_EQ(xml.find('\x7f'), std::string::npos);
  EXPECT_EQ(xml.find("\xc2\x85"), std::string::npos);
  EXPECT_EQ(suite_counts(xml, "sub").at("failures"), "1");
}

TEST(Junit, AnOpThatDidNotBuildFailsItsBuildAndSkipsEverySample) {
  const json op = op_json("mul.Tensor", "fail", 2, 0, std::nullopt, {}, {"compile_error"});
  const std::string xml = junit_xml({{"sub", results_json(smoke_identity(), "sub", json::array({op}), 1)}}, nullptr);
  const std::vector<Case> cases = testcases(xml);
  ASSERT_EQ(cases.size(), 3u) << xml;
  EXPECT_EQ(cases[0].outcome, "skipped");
  EXPECT_EQ(cases[0].message, "not run: the op failed with compile_error");
  EXPECT_EQ(cases[1].outcome, "skipped");
  EXPECT_EQ(cases[2].name, "build");
  EXPECT_EQ(cases[2].outcome, "failure");
  EXPECT_EQ(cases[2].type, "compile_error");
  const auto counts = suite_counts(xml, "sub");
  EXPECT_EQ(counts.at("tests"), "3");
  EXPECT_EQ(counts.at("failures"), "1");
  EXPECT_EQ(counts.at("skipped"), "2");
}

TEST(Junit, RuleFindingsAreFailuresNamingTheRuleAndAnUnevaluatedOpIsAnError) {
  const json rejected = op_json("relu.default", "rejected", 1, 1, std::nullopt, {"fallback_to_torch"});
  json errored = op_json("neg.default", "error", 0, 0);
  errored["error"] = "suite 'smoke' has no samples for neg.default";
  const std::string xml = junit_xml({{"sub", results_json(smoke_identity(), "sub", json::array({rejected, errored}), 1)}}, nullptr);
  const std::vector<Case> cases = testcases(xml);
  ASSERT_EQ(cases.size(), 3u) << xml;
  EXPECT_EQ(cases[0].outcome, "passed");
  EXPECT_EQ(cases[1].name, "rule fallback_to_torch");
  EXPECT_EQ(cases[1].outcome, "failure");
  EXPECT_EQ(cases[1].type, "rule:fallback_to_torch");
  EXPECT_EQ(cases[1].message, "fallback_to_torch: seen fallback_to_torch");
  EXPECT_EQ(cases[2].classname, "neg.default");
  EXPECT_EQ(cases[2].name, "evaluation");
  EXPECT_EQ(cases[2].outcome, "error");
  EXPECT_EQ(cases[2].message, "suite &apos;smoke&apos; has no samples for neg.default");
  const auto counts = suite_counts(xml, "sub");
  EXPECT_EQ(counts.at("failures"), "1");
  EXPECT_EQ(counts.at("errors"), "1");
}

TEST(Junit, OneTestsuitePerSubmissionAndTheTotalsOverAll) {
  const json a = results_json(smoke_identity(), "a", json::array({op_json("relu.default", "pass", 2, 2)}), 1);
  const json b =
      results_json(smoke_identity(), "b", json::array({op_json("relu.default", "fail", 3, 1, std::nullopt, {}, {"nan_mask"})}), 2);
  const std::string xml = junit_xml({{"a", a}, {"b", b}}, nullptr);
  EXPECT_EQ(suite_counts(xml, "a").at("tests"), "2");
  EXPECT_EQ(suite_counts(xml, "b").at("tests"), "4");  // 3 samples and the failure tied to none
  std::smatch m;
  ASSERT_TRUE(std::regex_search(xml, m, std::regex("<testsuites name=\"kernelgate\"([^>]*)>")));
  EXPECT_EQ(attribute(m[1], "tests"), "6");
  EXPECT_EQ(attribute(m[1], "failures"), "1");
  EXPECT_EQ(attribute(m[1], "time"), "3.000");
}

TEST(Junit, AMalformedDocumentNamesTheSubmissionAndTheField) {
  json doc = results_json(smoke_identity(), "sub", json::array({op_json("relu.default", "pass", 1, 1)}), 1);
  doc["ops"][0].erase("verdict");
  try {
    junit_xml({{"sub", doc}}, nullptr);
    FAIL() << "accepted an op without a verdict";
  } catch (const std::runtime_error& e) { EXPECT_EQ(std::string(e.what()), "sub/results.json: ops[0] (relu.default): verdict: missing"); }
}

TEST(XmlText, EscapesMarkupAndDropsControlCharacters) {
  EXPECT_EQ(xml_text("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_text("x\x01\x1b[2Jy\x7f\tz"), "x[2Jy\tz");
  EXPECT_EQ(xml_text("one\ntwo"), "one two");
  EXPECT_EQ(xml_text("one\ntwo", true), "one\ntwo");
  EXPECT_EQ(xml_text("\xc2\x9b\xc3\xa9"), "\xc3\xa9");  // C1 CSI dropped, é kept
}

}  // namespace
}  // namespace kg::results

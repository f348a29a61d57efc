// report.html as text (kernelgate/report_html.h): every string from a document escaped, nothing
// fetched from anywhere, the audit section only for an audit, the leaderboard's ranking, and
// malformed documents refused with the field named. tests/e2e/report_html_e2e_test.cc checks the
// pages in a browser.
#include "kernelgate/report_html.h"
#include "merge_fixtures.h"

#include <gtest/gtest.h>

#include <regex>

namespace kg::results {
namespace {

namespace fs = std::filesystem;

const std::string kMarkup = "<script>alert(1)</script><img src=x onerror=alert(2)>\" onclick=\"x' &amp;";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

json op(const std::string& name, const std::string& verdict, json speedup) {
  return {{"op", name},
          {"kind", "cpu"},
          {"verdict", verdict},
          {"tests", {{"total", 4}, {"passed", verdict == "pass" ? 4 : 2}, {"skipped", 0}}},
          {"failures", json::array()},
          {"violations", json::array()},
          {"speedup", speedup}};
}

// A results.json document with markup in every string a submission can put there.
json hostile_results() {
  json failing = op("relu.default" + kMarkup, "fail", nullptr);
  failing["failures"].push_back({{"category", "runtime_error" + kMarkup},
                                 {"evidence",
                                  {{"sample", "((T([2], f32),), {})" + kMarkup},
                                   {"message", "threw: " + kMarkup},
                                   {"values", "normal" + kMarkup},
                                   {"input_traits", json::array({"special" + kMarkup})},
                                   {"diagnosis", "diag" + kMarkup},
                                   {"first_mismatch", {{"index", json::array({0})}, {"expected", kMarkup}, {"actual", 1.0}}},
                                   {"repro", "kernelgate repro " + kMarkup}}}});
  failing["violations"].push_back({{"rule", "trivial_output" + kMarkup}, {"evidence", "const " + kMarkup}});
  failing["error"] = "error " + kMarkup;
  failing["build_log"] = "log " + kMarkup;
  failing["skipped"] = json::array({{{"sample", "s" + kMarkup}, {"reason", "r" + kMarkup}}});
  failing["failure_traits"] = {{"trait" + kMarkup, 1}};
  json passing = op("add.Tensor", "pass", 1.5);
  passing["timing"] = json::array({{{"sample", "t" + kMarkup}, {"reps", 10}, {"speedup", 1.5}}});
  return {{"submission", "sub" + kMarkup},
          {"device", "cpu"},
          {"suite", "smoke" + kMarkup},
          {"seed", 7},
          {"problems", json::array({{{"folder", "f" + kMarkup}, {"problem", "p" + kMarkup}}})},
          {"ops", json::array({failing, passing})}};
}

TEST(ReportHtml, EscapesEveryStringOfTheDocuments) {
  json audit = {{"clean", false},
                {"date", "d" + kMarkup},
                {"rules", json::array({{{"rule", "rule" + kMarkup},
                                        {"action", "reject" + kMarkup},
                                        {"threats", json::array({"B1" + kMarkup})},
                                        {"checked", "c" + kMarkup},
                                        {"ops", json::array({{{"op", "o" + kMarkup},
                                                              {"status", "found" + kMarkup},
                                                              {"evidence", json::array({"e" + kMarkup})},
                                                              {"note", "n" + kMarkup}}})}}})}};
  const std::string html = report_html(hostile_results(), audit);
  EXPECT_EQ(count(html, "<script"), 1u);  // the page's own
  EXPECT_EQ(count(html, "<img"), 0u);
  EXPECT_EQ(count(html, "onclick"), count(html, "&quot; onclick=&quot;x&#39; &amp;amp;"));
  EXPECT_GE(count(html, "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"), 20u);
}

TEST(ReportHtml, WritesBytesThatAreNotUtf8AndDisplayControlsAsVisibleEscapes) {
  json results = hostile_results();
  results["ops"][0]["error"] = std::string(
      "a\xff"
      "b \xe2\x80\xae"
      "c \x1b[2J \xc2\x85");
  const std::string html = report_html(results);
  EXPECT_NE(html.find("a\\xffb \\u{202E}c \\x1b[2J \\u{0085}"), std::string::npos);
  EXPECT_EQ(html.find('\xff'), std::string::npos);
  EXPECT_EQ(html.find("\xe2\x80\xae"), std::string::npos);
}

TEST(ReportHtml, FetchesNothingAndAllowsOnlyItsOwnScript) {
  const std::string html = report_html(hostile_results());
  // The SVG namespace is a name, never fetched.
  const std::string without_svg_namespace = std::regex_replace(html, std::regex("xmlns=\"http://www.w3.org/2000/svg\""), "");
  EXPECT_FALSE(std::regex_search(without_svg_namespace, std::regex("https?:|//[a-z]")));
  EXPECT_FALSE(std::regex_search(html, std::regex("<[a-zA-Z][^>]* (src|srcset|data|action)=")));
  EXPECT_FALSE(std::regex_search(html, std::regex("href=\"[^#]")));  // links stay on the page
  EXPECT_TRUE(std::regex_search(html, std::regex("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; [^\"]*"
                                                 "script-src 'sha256-[A-Za-z0-9+/]{43}='\">")));
}

TEST(ReportHtml, ShowsTheAuditSectionOnlyForAnAudit) {
  EXPECT_EQ(report_html(hostile_results()).find("Audit findings"), std::string::npos);
  const json audit = {{"clean", true}, {"rules", json::array()}};
  EXPECT_NE(report_html(hostile_results(), audit).find("<h2>Audit findings</h2>"), std::string::npos);
}

TEST(ReportHtml, LeaderboardRanksByOpsCorrectThenGeomeanSpeedup) {
  const auto entry = [](const std::string& name, std::vector<json> ops) { return BatchEntry{name, {{"submission", name}, {"ops", ops}}}; };
  const std::vector<BatchEntry> entries = {
      entry("half-right", {op("a.default", "pass", 3.0), op("b.default", "fail", nullptr)}),
      entry("right-slow", {op("a.default", "pass", 0.5), op("b.default", "pass", 0.5)}),
      entry("right-fast", {op("a.default", "pass", 2.0), op("b.default", "pass", 2.0)}),
      entry("right-untimed", {op("a.default", "pass", nullptr), op("b.default", "pass", nullptr)}),
  };
  RunIdentity id;
  id.suite = "smoke";
  const std::string html = batch_report_html(id, entries);
  std::vector<std::string> ranked;
  const std::regex row("data-submission-row><td class=\"num\">(\\d+)</td><td><a href=\"#sub-\\d+\">([^<]*)</a>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), row); it != std::sregex_iterator(); ++it) ranked.push_back((*it)[2]);
  EXPECT_EQ(ranked, (std::vector<std::string>{"right-fast", "right-slow", "right-untimed", "half-right"}));
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_NE(html.find("<section id=\"sub-" + std::to_string(i) + "\">"), std::string::npos);
}

TEST(ReportHtml, RefusesAMalformedDocumentNamingTheField) {
  json results = hostile_results();
  results["ops"][1].erase("verdict");
  try {
    report_html(results);
    FAIL() << "a malformed document gave a report";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("ops[1] (add.Tensor): verdict: missing"), std::string::npos) << e.what();
  }
  EXPECT_THROW(report_html(json{{"submission", "x"}}), std::runtime_error);
}

TEST(ReportHtml, MergeWritesTheBatchReportAndOnePerSubmission) {
  const fs::path base = testing::scratch("report-html-merge");
  testing::write_shard(base / "s0", testing::run_identity(0, 2),
                       {{"alpha", json::array({testing::op_json("relu.default", "pass", 2, 2, 1.5)})}});
  testing::write_shard(base / "s1", testing::run_identity(1, 2), {{"beta", json::array({testing::op_json("add.Tensor", "fail", 2, 1)})}});
  merge({(base / "s0").string(), (base / "s1").string()}, (base / "out").string());
  const std::string batch = testing::read_text(base / "out" / "report.html");
  EXPECT_NE(batch.find(">alpha</a>"), std::string::npos);
  EXPECT_NE(batch.find(">beta</a>"), std::string::npos);
  EXPECT_NE(batch.find("<tr><th>shard</th><td>the whole run</td></tr>"), std::string::npos);  // the whole run's
  EXPECT_NE(testing::read_text(base / "out" / "alpha" / "report.html").find("<code>relu.default</code>"), std::string::npos);
  EXPECT_NE(testing::read_text(base / "out" / "beta" / "report.html").find("<code>add.Tensor</code>"), std::string::npos);
  fs::remove_all(base);
}

}  // namespace
}  // namespace kg::results

// results.json's summary computed from its per-op objects (summary_of_ops), a batch's
// summary.json, summary.csv and summary.md, and a batch's exit status.
#include "merge_fixtures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace kg::results {
namespace {

using testing::op_json;
using testing::results_json;
using testing::run_identity;

// The ops and summary of results.json files that kernelgate eval wrote, with the summary computed
// in the report itself (before summary_of_ops existed): examples/correct with timing, and
// examples/buggy, both --seed 1 on the CPU. The per-op objects keep the fields a summary reads.
const char* kCorrectRun =
    R"json({"ops":[{"op":"_softmax.default","kind":"cpu","verdict":"pass","tests":{"passed":5,"skipped":0,"total":5},"speedup":0.6296511116552873,"violations":[],"failures":[]},{"op":"add.Tensor","kind":"cpu","verdict":"pass","tests":{"passed":7,"skipped":0,"total":7},"speedup":0.9719062034955919,"violations":[],"failures":[]},{"op":"add_.Tensor","kind":"cpu","verdict":"pass","tests":{"passed":4,"skipped":0,"total":4},"speedup":0.9286515810251498,"violations":[],"failures":[]},{"op":"mm.default","kind":"cpu","verdict":"pass","tests":{"passed":5,"skipped":0,"total":5},"speedup":0.7853708039496661,"violations":[],"failures":[]},{"op":"mul.Tensor","kind":"cpu","verdict":"pass","tests":{"passed":4,"skipped":0,"total":4},"speedup":0.7039063285997532,"violations":[],"failures":[]},{"op":"relu.default","kind":"cpu","verdict":"pass","tests":{"passed":6,"skipped":1,"total":6},"speedup":0.691398675818014,"violations":[],"failures":[]},{"op":"sum.dim_IntList","kind":"cpu","verdict":"pass","tests":{"passed":5,"skipped":0,"total":5},"speedup":0.6170790220859722,"violations":[],"failures":[]}],"summary":{"errors":0,"failed":0,"fast_p":{"fast_0":1.0,"fast_1":0.0,"fast_1.5":0.0,"fast_2":0.0},"fraction_ops_correct":1.0,"geomean_speedup_correct_ops":0.7504459875903035,"ops":7,"passed":7,"rejected":0,"test_pass_rate":1.0,"tests_passed":36,"tests_total":36,"wall_seconds":53.13437693}})json";
const char* kBuggyRun =
    R"json({"ops":[{"op":"add.Tensor","kind":"cpu","verdict":"fail","tests":{"passed":6,"skipped":0,"total":7},"speedup":null,"violations":[],"failures":[{"category":"shape_mismatch"}]},{"op":"relu.default","kind":"cpu","verdict":"fail","tests":{"passed":5,"skipped":1,"total":6},"speedup":null,"violations":[],"failures":[{"category":"nan_mask"}]},{"op":"sum.dim_IntList","kind":"cpu","verdict":"fail","tests":{"passed":4,"skipped":0,"total":5},"speedup":null,"violations":[],"failures":[{"category":"value_mismatch"}]}],"summary":{"errors":0,"failed":3,"fast_p":{"fast_0":0.0,"fast_1":0.0,"fast_1.5":0.0,"fast_2":0.0},"fraction_ops_correct":0.0,"geomean_speedup_correct_ops":null,"ops":3,"passed":0,"rejected":0,"test_pass_rate":0.8333333333333334,"tests_passed":15,"tests_total":18,"wall_seconds":4.082409858}})json";

std::set<std::string> keys(const json& j) {
  std::set<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.insert(it.key());
  return k;
}

TEST(SummaryOfOps, EqualsTheSummaryTheReportWroteForARealRun) {
  for (const char* text : {kCorrectRun, kBuggyRun}) {
    const json run = json::parse(text);
    const json expected = run["summary"];
    const json got = summary_of_ops(run["ops"], expected["wall_seconds"].get<double>());
    EXPECT_EQ(keys(got), keys(expected));
    EXPECT_EQ(keys(got["fast_p"]), (std::set<std::string>{"fast_0", "fast_1", "fast_1.5", "fast_2"}));
    // The same text, so the same keys, values and number types (counts integers, fractions floats).
    EXPECT_EQ(got.dump(), expected.dump());
  }
}

TEST(SummaryOfOps, CountsVerdictsFastPAndTheGeomeanOfCorrectOpsOnly) {
  const json ops =
      json::array({op_json("a.default", "pass", 4, 4, 2.5), op_json("b.default", "pass", 3, 3, 1.2),
                   op_json("c.default", "pass", 2, 2, 0.5), op_json("d.default", "pass", 1, 1), op_json("e.default", "fail", 5, 3, 9.0),
                   op_json("f.default", "rejected", 2, 2, 3.0, {"timing_cheat"}), op_json("g.default", "error", 0, 0)});
  const json s = summary_of_ops(ops, 12.5);
  EXPECT_EQ(s["ops"], 7);
  EXPECT_EQ(s["passed"], 4);
  EXPECT_EQ(s["failed"], 1);
  EXPECT_EQ(s["rejected"], 1);
  EXPECT_EQ(s["errors"], 1);
  EXPECT_EQ(s["tests_total"], 17);
  EXPECT_EQ(s["tests_passed"], 15);
  EXPECT_DOUBLE_EQ(s["test_pass_rate"].get<double>(), 15.0 / 17.0);
  EXPECT_DOUBLE_EQ(s["fraction_ops_correct"].get<double>(), 4.0 / 7.0);
  // Only correct ops count, and a speedup must be above p (1.2 is not above 1.5; 2.5 is above 2).
  EXPECT_DOUBLE_EQ(s["fast_p"]["fast_0"].get<double>(), 4.0 / 7.0);
  EXPECT_DOUBLE_EQ(s["fast_p"]["fast_1"].get<double>(), 2.0 / 7.0);
  EXPECT_DOUBLE_EQ(s["fast_p"]["fast_1.5"].get<double>(), 1.0 / 7.0);
  EXPECT_DOUBLE_EQ(s["fast_p"]["fast_2"].get<double>(), 1.0 / 7.0);
  // The geomean of 2.5, 1.2 and 0.5: the wrong and rejected ops' speedups never enter it.
  EXPECT_NEAR(s["geomean_speedup_correct_ops"].get<double>(), std::cbrt(1.5), 1e-12);
  EXPECT_EQ(s["wall_seconds"], 12.5);
}

TEST(SummaryOfOps, NoOpsIsZeroesAndANullGeomean) {
  const json s = summary_of_ops(json::array(), 0.5);
  EXPECT_EQ(s["ops"], 0);
  EXPECT_EQ(s["fraction_ops_correct"], 0.0);
  EXPECT_EQ(s["test_pass_rate"], 0.0);
  EXPECT_EQ(s["fast_p"]["fast_1"], 0.0);
  EXPECT_TRUE(s["geomean_speedup_correct_ops"].is_null());
}

TEST(SummaryOfOps, AMissingOrMistypedFieldNamesTheOpAndTheField) {
  json ops = json::array({op_json("a.default", "pass", 1, 1), op_json("relu.default", "pass", 1, 1)});
  ops[1].erase("verdict");
  EXPECT_THROW(
      {
        try {
          summary_of_ops(ops, 0);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "ops[1] (relu.default): verdict: missing");
          throw;
        }
      },
      std::runtime_error);
  ops[1]["verdict"] = "pass";
  ops[1]["tests"]["total"] = "many";
  try {
    summary_of_ops(ops, 0);
    ADD_FAILURE() << "a string test count was taken";
  } catch (const std::runtime_error& e) { EXPECT_STREQ(e.what(), "ops[1] (relu.default): tests.total: not a count"); }
  EXPECT_THROW(summary_of_ops(json::object(), 0), std::runtime_error);
}

BatchEntry entry(const std::string& name, const json& ops) { return {name, results_json(run_identity(), name, ops, 2.0)}; }

std::vector<BatchEntry> mixed_batch() {
  return {entry("all-pass",
                json::array({op_json("relu.default", "pass", 3, 3, 2.0, {}, {}, {1.5, 2.5}), op_json("add.Tensor", "pass", 2, 2, 1.0)})),
          entry("one-fail",
                json::array({op_json("relu.default", "pass", 3, 3, 0.5),
                             op_json("add.Tensor", "fail", 4, 1, std::nullopt, {}, {"value_mismatch", "value_mismatch", "nan_mask"})})),
          entry("error-beats-fail", json::array({op_json("relu.default", "fail", 3, 2), op_json("add.Tensor", "error", 0, 0)})),
          entry("rejected-beats-all",
                json::array({op_json("relu.default", "error", 0, 0),
                             op_json("add.Tensor", "rejected", 2, 2, std::nullopt, {"timing_cheat", "stream_race"})})),
          entry("no-ops", json::array())};
}

TEST(BatchSummary, VerdictsPerSubmissionAndPerOpWithRulesAndFailureCategories) {
  const json s = batch_summary_json(run_identity(), mixed_batch());
  EXPECT_EQ(s["kernelgate_summary"], 1);
  EXPECT_EQ(s["run"], identity_json(run_identity()));
  ASSERT_EQ(s["submissions"].size(), 5u);
  std::vector<std::string> verdicts;
  for (const json& sub : s["submissions"]) verdicts.push_back(sub["verdict"]);
  EXPECT_EQ(verdicts, (std::vector<std::string>{"pass", "fail", "error", "rejected", "error"}));
  const json& one_fail = s["submissions"][1];
  EXPECT_EQ(one_fail["name"], "one-fail");
  EXPECT_EQ(one_fail["submission"], "/subs/one-fail");
  EXPECT_EQ(one_fail["problems"][0]["folder"], "notes");
  const json& add = one_fail["ops"][1];
  EXPECT_EQ(add["op"], "add.Tensor");
  EXPECT_EQ(add["kind"], "cpu");
  EXPECT_EQ(add["verdict"], "fail");
  EXPECT_EQ(add["tests"], (json{{"total", 4}, {"passed", 1}}));
  EXPECT_TRUE(add["speedup"].is_null());
  EXPECT_EQ(add["failure_categories"], (json{{"nan_mask", 1}, {"value_mismatch", 2}}));
  EXPECT_EQ(s["submissions"][3]["ops"][1]["rules"], (json{"timing_cheat", "stream_race"}));
  EXPECT_EQ(s["submissions"][0]["ops"][0]["speedup"], 2.0);

  const json& t = s["totals"];
  EXPECT_EQ(t["submissions"], 5);
  EXPECT_EQ(t["submissions_passed"], 1);
  EXPECT_EQ(t["ops"], 8);
  EXPECT_EQ(t["passed"], 3);
  EXPECT_EQ(t["failed"], 2);
  EXPECT_EQ(t["errors"], 2);
  EXPECT_EQ(t["rejected"], 1);
  EXPECT_DOUBLE_EQ(t["fraction_ops_correct"].get<double>(), 3.0 / 8.0);
  EXPECT_NEAR(t["geomean_speedup_correct_ops"].get<double>(), 1.0, 1e-12);  // 2.0, 1.0, 0.5
  EXPECT_DOUBLE_EQ(t["fast_p"]["fast_1.5"].get<double>(), 1.0 / 8.0);
  EXPECT_FALSE(t.contains("wall_seconds"));
}

TEST(BatchSummary, ACorruptResultsJsonNamesTheSubmissionAndTheField) {
  std::vector<BatchEntry> batch = mixed_batch();
  batch[1].results["ops"][0]["tests"].erase("passed");
  try {
    batch_summary_json(run_identity(), batch);
    ADD_FAILURE() << "a results.json without a test count was summarised";
  } catch (const std::runtime_error& e) { EXPECT_STREQ(e.what(), "one-fail/results.json: ops[0] (relu.default): tests.passed: missing"); }
  batch[1].results.erase("ops");
  EXPECT_THROW(batch_summary_csv(batch), std::runtime_error);
}

TEST(BatchExitCode, ZeroOnlyWhenEveryOpOfEverySubmissionPassed) {
  std::vector<BatchEntry> batch = mixed_batch();
  EXPECT_EQ(batch_exit_code({batch[0]}), 0);
  EXPECT_EQ(batch_exit_code({batch[0], batch[0]}), 0);
  EXPECT_EQ(batch_exit_code({batch[0], batch[1]}), 1);
  EXPECT_EQ(batch_exit_code({batch[2]}), 1);
  EXPECT_EQ(batch_exit_code({batch[3]}), 1);
  EXPECT_EQ(batch_exit_code({batch[0], batch[4]}), 1) << "a submission without ops";
  EXPECT_EQ(batch_exit_code({}), 1) << "an empty batch";
}

// RFC 4180 read back: rows of fields, CRLF between records, quoted fields may hold anything.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') rows.back().back() += text[++i];
      else if (c == '"') quoted = false;
      else rows.back().back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      rows.emplace_back(1);
    } else {
      rows.back().back() += c;
    }
  }
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
  return rows;
}

const std::vector<std::string> kHeader = {"submission",
                                          "operator",
                                          "kind",
                                          "verdict",
                                          "tests_total",
                                          "tests_passed",
                                          "correctness_rate",
                                          "performance_tests",
                                          "avg_speedup",
                                          "geomean_speedup",
                                          "max_absolute_error",
                                          "max_relative_error",
                                          "rules",
                                          "failure_categories"};

TEST(BatchSummaryCsv, OneRowPerSubmissionAndOpUnderBackendBenchColumnNames) {
  const std::string csv = batch_summary_csv(mixed_batch());
  EXPECT_EQ(csv.substr(0, csv.find("\r\n")),
            "submission,operator,kind,verdict,tests_total,tests_passed,correctness_rate,performance_tests,avg_speedup,"
            "geomean_speedup,max_absolute_error,max_relative_error,rules,failure_categories");
  const auto rows = parse_csv(csv);
  ASSERT_EQ(rows.size(), 1u + 9u);  // 8 ops, and the submission without ops on a row of its own
  EXPECT_EQ(rows[0], kHeader);
  for (const auto& row : rows) EXPECT_EQ(row.size(), kHeader.size());
  EXPECT_EQ(rows[1],
            (std::vector<std::string>{"all-pass", "relu.default", "cpu", "pass", "3", "3", "1.0", "2", "2.0", "2.0", "", "", "", ""}));
  EXPECT_EQ(rows[4], (std::vector<std::string>{"one-fail", "add.Tensor", "cpu", "fail", "4", "1", "0.25", "0", "", "", "0.5", "0.25", "",
                                               "nan_mask=1;value_mismatch=2"}));
  EXPECT_EQ(rows[8][12], "timing_cheat;stream_race");
  EXPECT_EQ(rows[9], (std::vector<std::string>{"no-ops", "", "", "error", "0", "0", "", "0", "", "", "", "", "", ""}));
}

TEST(BatchSummaryCsv, HostileNamesAreQuotedAndReadBackWhole) {
  const std::vector<std::string> names = {"a,b", "say \"hi\"", "two\nlines", "cr\rhere", "\"", ",", "plain"};
  std::vector<BatchEntry> batch;
  for (const auto& n : names) batch.push_back(entry(n, json::array({op_json("op," + n, "pass", 1, 1, std::nullopt, {"rule\"" + n})})));
  const std::string csv = batch_summary_csv(batch);
  EXPECT_NE(csv.find("\"say \"\"hi\"\"\""), std::string::npos) << csv;
  EXPECT_NE(csv.find("\r\nplain,\"op,plain\","), std::string::npos) << "an unquoted field stays bare: " << csv;
  const auto rows = parse_csv(csv);
  ASSERT_EQ(rows.size(), names.size() + 1);
  for (size_t i = 0; i < names.size(); ++i) {
    ASSERT_EQ(rows[i + 1].size(), kHeader.size()) << names[i];
    EXPECT_EQ(rows[i + 1][0], names[i]);
    EXPECT_EQ(rows[i + 1][1], "op," + names[i]);
    EXPECT_EQ(rows[i + 1][12], "rule\"" + names[i]);
  }
}

// The cells of a Markdown table row: split at pipes that are not backslash-escaped.
std::vector<std::string> md_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cur;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      cur += line.substr(i, 2);
      ++i;
    } else if (line[i] == '|') {
      cells.push_back(cur);
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  cells.push_back(cur);
  return cells;  // the first and last are what lies outside the outer pipes
}

TEST(BatchSummaryMarkdown, OverallTableTotalsAndEscapedCells) {
  std::vector<BatchEntry> batch = mixed_batch();
  batch.push_back(entry("evil|name\nwith [a link](http://x) and <b>html</b> `code` \x1b[31m",
                        json::array({op_json("relu.default", "fail", 1, 0, std::nullopt, {"rule|x"}, {"value_mismatch"})})));
  const std::string md = batch_summary_markdown(run_identity(), batch);
  EXPECT_EQ(md.rfind("# kernelgate batch summary\n", 0), 0u) << md;
  EXPECT_NE(md.find("| all-pass | pass | 2/2 | 1.41x |"), std::string::npos) << md;
  EXPECT_NE(md.find("| one-fail | fail | 1/2 | 0.50x |"), std::string::npos) << md;
  EXPECT_NE(md.find("| rejected-beats-all | rejected | 0/2 | - | stream\\_race, timing\\_cheat |"), std::string::npos) << md;
  EXPECT_NE(md.find("| no-ops | error | 0/0 | - | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("## Totals"), std::string::npos);
  EXPECT_NE(md.find("| submissions | 6 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| fraction\\_ops\\_correct | 0.33 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| fast\\_1.5 | 0.11 |"), std::string::npos) << md;
  // The hostile name stays in its cell: one line, no live pipe, link, HTML, code span or escape.
  const std::string evil = "evil\\|name<br>with \\[a link\\](http://x) and \\<b\\>html\\</b\\> \\`code\\` \\x1b\\[31m";
  EXPECT_NE(md.find("| " + evil + " | fail | 0/1 | - | rule\\|x |"), std::string::npos) << md;
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
  // Every row of every table has as many cells as the table's header.
  size_t start = 0, header_cells = 0;
  int rows = 0;
  while (start < md.size()) {
    const size_t end = md.find('\n', start);
    const std::string line = md.substr(start, end - start);
    start = end == std::string::npos ? md.size() : end + 1;
    if (line.empty() || line[0] != '|') {
      header_cells = 0;
    } else if (header_cells == 0) {
      header_cells = md_cells(line).size();
    } else {
      EXPECT_EQ(md_cells(line).size(), header_cells) << line;
      rows++;
    }
  }
  EXPECT_GT(rows, 20);
}

}  // namespace
}  // namespace kg::results

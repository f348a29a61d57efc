// `kernelgate compare` (kernelgate/compare.h): reading results and claims files, the per-op
// comparison, whether each claim of B holds against A within the speedup tolerance, and errors
// that name the file and the field.
#include "kernelgate/compare.h"
#include "merge_fixtures.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kg::results {
namespace {

namespace fs = std::filesystem;
using testing::op_json;
using testing::results_json;
using testing::smoke_identity;

class Compare : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kg-compare-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string results_file(const std::string& name, const json& ops) {
    return file(name, results_json(smoke_identity(), "sub", ops, 1).dump());
  }
  // The error message of reading `path`, "" when it reads.
  static std::string read_error(const std::string& path) {
    try {
      read_compare_side(path);
    } catch (const std::runtime_error& e) { return e.what(); }
    return "";
  }
  fs::path dir_;
};

const json kMeasured = json::array({op_json("relu.default", "pass", 4, 4, 1.0), op_json("add.Tensor", "fail", 5, 3),
                                    op_json("mm.default", "pass", 2, 2, 2.0, {"nondeterministic_output"})});

TEST_F(Compare, ReadsAnOutFolderAndClaimsInJsonAndCsv) {
  const CompareSide run = read_compare_side(fs::path(results_file("out/results.json", kMeasured)).parent_path().string());
  EXPECT_EQ(run.kind, "results");
  ASSERT_EQ(run.ops.size(), 3u);
  EXPECT_EQ(run.ops[2].op, "mm.default");
  EXPECT_EQ(run.ops[2].rules, std::vector<std::string>{"nondeterministic_output"});

  const CompareSide csv = read_compare_side(file("claims.csv",
                                                 "operator,verdict,speedup,notes\r\n"
                                                 "aten.relu.default,pass,1.8x,\"fast, they say\"\r\n"
                                                 "aten::add.Tensor,,0.5\n"
                                                 "mm.default,fail,\n"));
  EXPECT_EQ(csv.kind, "claims");
  ASSERT_EQ(csv.ops.size(), 3u);
  EXPECT_EQ(csv.ops[0].op, "relu.default");
  EXPECT_EQ(csv.ops[0].verdict, "pass");
  EXPECT_DOUBLE_EQ(csv.ops[0].speedup.value(), 1.8);
  EXPECT_EQ(csv.ops[1].op, "add.Tensor");
  EXPECT_FALSE(csv.ops[1].verdict);
  EXPECT_DOUBLE_EQ(csv.ops[1].speedup.value(), 0.5);
  EXPECT_FALSE(csv.ops[2].speedup);

  const CompareSide js = read_compare_side(
      file("claims.json", R"({"kernelgate_claims": 1, "claims": [{"operator": "relu.default", "verdict": "pass", "speedup": null}]})"));
  ASSERT_EQ(js.ops.size(), 1u);
  EXPECT_EQ(js.ops[0].verdict, "pass");
  EXPECT_FALSE(js.ops[0].speedup);
}

TEST_F(Compare, AClaimedSpeedupHoldsWithinTheToleranceAndNotBeyondIt) {
  const CompareSide a = read_compare_side(results_file("a.json", kMeasured));
  const CompareSide b = read_compare_side(file("b.csv", "operator,verdict,speedup\nrelu.default,pass,1.1\n"));
  // 1.0 measured against 1.1 claimed: 0.91 of the claim.
  const Comparison within = compare_sides(a, b, 0.1);
  EXPECT_EQ(within.claims_checked, 2u);
  EXPECT_EQ(within.claims_failed, 0u);
  EXPECT_EQ(comparison_exit_code(within), 0);
  const Comparison strict = compare_sides(a, b, 0.05);
  EXPECT_EQ(strict.claims_failed, 1u);
  EXPECT_EQ(comparison_exit_code(strict), 1);
  const OpComparison& relu = strict.ops[2];  // sorted: add.Tensor, mm.default, relu.default
  ASSERT_EQ(relu.op, "relu.default");
  ASSERT_EQ(relu.claims.size(), 2u);
  EXPECT_TRUE(relu.claims[0].holds);
  EXPECT_FALSE(relu.claims[1].holds);
  EXPECT_EQ(relu.claims[1].why, "claimed speedup 1.10x; A measured 1.00x, short by more than 5%");
  EXPECT_NEAR(relu.speedup_ratio.value(), 1.0 / 1.1, 1e-12);
  const std::string text = comparison_text(strict, a, b);
  EXPECT_NE(text.find("relu.default: claimed speedup 1.10x; A measured 1.00x"), std::string::npos) << text;
  EXPECT_NE(text.find("3 ops, 0 verdict changes; 2 claims of B checked, 1 do not hold (speedup tolerance 5%)"), std::string::npos) << text;
}

TEST_F(Compare, AClaimedPassOfAFailedOrMissingOpDoesNotHoldAndAClaimedFailIsOnlyAChange) {
  const CompareSide a = read_compare_side(results_file("a.json", kMeasured));
  const CompareSide b = read_compare_side(file("b.csv", "operator,verdict\nadd.Tensor,pass\nneg.default,pass\nrelu.default,fail\n"));
  const Comparison c = compare_sides(a, b, 0.1);
  EXPECT_EQ(c.claims_checked, 2u);
  EXPECT_EQ(c.claims_failed, 2u);
  EXPECT_EQ(c.verdict_changes, 2u);
  EXPECT_EQ(comparison_exit_code(c), 1);
  const json j = comparison_json(c, a, b);
  EXPECT_EQ(j["summary"]["claims_failed"], 2);
  EXPECT_EQ(j["summary"]["all_claims_hold"], false);
  EXPECT_EQ(j["ops"][0]["op"], "add.Tensor");
  EXPECT_EQ(j["ops"][0]["claims"][0]["why"], "claimed pass; A's verdict is fail");
  EXPECT_EQ(j["ops"][2]["op"], "neg.default");
  EXPECT_TRUE(j["ops"][2]["a"].is_null());
  EXPECT_EQ(j["ops"][2]["claims"][0]["holds"], false);
  EXPECT_EQ(j["ops"][3]["verdict_changed"], true);
  EXPECT_TRUE(j["ops"][3]["claims"].empty());
}

TEST_F(Compare, TwoRunsShowRulesThatAppearedAndDisappeared) {
  const CompareSide a = read_compare_side(results_file("a.json", kMeasured));
  const json later =
      json::array({op_json("relu.default", "rejected", 4, 4, std::nullopt, {"replayed_output"}), op_json("mm.default", "pass", 2, 2, 1.0)});
  const CompareSide b = read_compare_side(results_file("b.json", later));
  const Comparison c = compare_sides(a, b, 0.1);
  ASSERT_EQ(c.ops.size(), 3u);
  EXPECT_EQ(c.ops[1].op, "mm.default");
  EXPECT_EQ(c.ops[1].rules_disappeared, std::vector<std::string>{"nondeterministic_output"});
  EXPECT_DOUBLE_EQ(c.ops[1].speedup_ratio.value(), 2.0);
  EXPECT_EQ(c.ops[2].rules_appeared, std::vector<std::string>{"replayed_output"});
  EXPECT_TRUE(c.ops[2].verdict_changed);
  EXPECT_EQ(comparison_exit_code(c), 0);  // mm's pass and 1.0x hold against A's pass at 2.0x
}

TEST_F(Compare, MalformedInputsNameTheFileAndTheField) {
  const std::string csv = file("bad.csv", "operator,verdict,speedup\nrelu.default,pass,1.2\nadd.Tensor,pass,fast\n");
  EXPECT_EQ(read_error(csv), csv + ":3: speedup: not a number: 'fast'");
  const std::string verdict =
      file("bad.json", R"({"kernelgate_claims": 1, "claims": [{"operator": "relu.default", "verdict": "passed"}]})");
  EXPECT_EQ(read_error(verdict), verdict + ": claims[0]: verdict: 'passed' is not pass, fail, rejected or error");
  const std::string twice = file("twice.csv", "operator,speedup\nrelu.default,2\naten.relu.default,3\n");
  EXPECT_EQ(read_error(twice), twice + ":3: operator: 'relu.default' is claimed twice");
  const std::string header = file("header.csv", "op,verdict\nrelu.default,pass\n");
  EXPECT_EQ(read_error(header), header + ":1: header: no operator column");
  json doc = results_json(smoke_identity(), "sub", kMeasured, 1);
  doc["ops"][1].erase("verdict");
  const std::string results = file("r.json", doc.dump());
  EXPECT_EQ(read_error(results), results + ": ops[1] (add.Tensor): verdict: missing");
  const std::string neither = file("n.json", R"({"rows": []})");
  EXPECT_EQ(read_error(neither), neither + ": neither a results.json (no ops) nor a claims file (no claims)");
  fs::create_directories(dir_ / "empty");
  EXPECT_NE(read_error((dir_ / "empty").string()).find((dir_ / "empty" / "results.json").string() + ": cannot open"), std::string::npos);
}

}  // namespace
}  // namespace kg::results

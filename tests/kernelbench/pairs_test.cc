// KernelBenchPairs.*: which solution `--problem P S` judges against which problem.
#include <gtest/gtest.h>

#include "kernelgate/kernelbench.h"
#include "kernelgate/remove_tree.h"

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

// std::filesystem::remove_all's job: libtorch 2.x exports a broken copy of it (remove_tree.h).
void remove_tree(const fs::path& p) {
  std::error_code ec;
  kg::loader::remove_tree(p.string(), ec);
}

class KernelBenchPairs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(KG_TEST_OUT) / ("pairs-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    remove_tree(root_);
    fs::create_directories(root_ / "problems");
    fs::create_directories(root_ / "solutions");
  }
  void touch(const std::string& rel) { std::ofstream(root_ / rel) << "# x\n"; }
  std::string at(const std::string& rel) const { return (root_ / rel).string(); }
  fs::path root_;
};

TEST_F(KernelBenchPairs, TwoFilesAreOnePairNamedByTheProblem) {
  touch("problems/19_ReLU.py");
  touch("solutions/mine.py");
  std::vector<std::pair<std::string, std::string>> left;
  const auto p = kg::kernelbench::pairs(at("problems/19_ReLU.py"), at("solutions/mine.py"), &left);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].name, "19_ReLU");
  EXPECT_EQ(p[0].problem, fs::canonical(root_ / "problems/19_ReLU.py").string());
  EXPECT_EQ(p[0].solution, fs::canonical(root_ / "solutions/mine.py").string());
  EXPECT_TRUE(left.empty());
}

TEST_F(KernelBenchPairs, FoldersMatchByFileNameThenByProblemNumber) {
  touch("problems/1_Square_matrix_multiplication_.py");
  touch("problems/19_ReLU.py");
  touch("problems/23_Softmax.py");
  touch("problems/40_LayerNorm.py");
  touch("solutions/19_ReLU.py");
  touch("solutions/level_1_problem_1_sample_0_kernel.py");
  touch("solutions/level_1_problem_40_sample_0_kernel.py");
  touch("solutions/level_1_problem_40_sample_1_kernel.py");
  touch("solutions/unrelated.py");
  std::vector<std::pair<std::string, std::string>> left;
  const auto p = kg::kernelbench::pairs(at("problems"), at("solutions"), &left);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].name, "19_ReLU");
  EXPECT_EQ(fs::path(p[0].solution).filename(), "19_ReLU.py");
  EXPECT_EQ(p[1].name, "1_Square_matrix_multiplication_");
  EXPECT_EQ(fs::path(p[1].solution).filename(), "level_1_problem_1_sample_0_kernel.py");
  std::map<std::string, std::string> why(left.begin(), left.end());
  EXPECT_NE(why["23_Softmax.py"].find("no solution"), std::string::npos) << why["23_Softmax.py"];
  EXPECT_NE(why["40_LayerNorm.py"].find("2 solutions"), std::string::npos) << why["40_LayerNorm.py"];
  EXPECT_NE(why["unrelated.py"].find("matches no problem"), std::string::npos) << why["unrelated.py"];
}

TEST_F(KernelBenchPairs, BadPathsAreErrorsNamingThem) {
  touch("problems/19_ReLU.py");
  touch("solutions/notes.txt");
  const auto message = [&](const std::string& p, const std::string& s) {
    try {
      kg::kernelbench::pairs(p, s, nullptr);
    } catch (const std::exception& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  EXPECT_NE(message(at("problems/missing.py"), at("problems/19_ReLU.py")).find("missing.py"), std::string::npos);
  EXPECT_NE(message(at("problems/19_ReLU.py"), at("solutions")).find("two files or two folders"), std::string::npos);
  EXPECT_NE(message(at("problems/19_ReLU.py"), at("solutions/notes.txt")).find("not a .py file"), std::string::npos);
}

}  // namespace

// `kernelgate train-check` end to end: the bundled GPT (and problem files) trained in sandboxed
// runners with and without tests/train's submissions installed over aten. Honest kernels (cpu and
// python kinds, a backward kernel among them) stay in the band; a gelu biased by 1e-3, which passes
// the forward suites at a loose tolerance, leaves it and the step is named; a kernel calling the
// op it replaces stops the run by name; a model that does not load or whose own eager training is
// not finite is the model's fault (exit 2).
#include "e2e_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using kg::e2e::run;

namespace {

const std::string kTrain = std::string(KG_SOURCE_DIR) + "/tests/train/";

bool python_kind() { return KG_TEST_PYTHON_KIND; }

nlohmann::json train_json(const fs::path& out) { return nlohmann::json::parse(kg::e2e::read(out / "train.json")); }

class TrainCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!python_kind()) GTEST_SKIP() << "kg-runner's python plugin is not built: train-check runs its model in it";
    dir_ = kg::e2e::temp_dir(std::string("train-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(TrainCheck, HonestCppKernelsForwardAndBackwardStayInTheBandOnTheBundledGpt) {
  const auto r = run("train-check " + kTrain + "honest --out " + (dir_ / "out").string() + " --steps 6", 600);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = train_json(dir_ / "out");
  EXPECT_EQ(j["verdict"], "inside");
  EXPECT_EQ(j["steps"], 6);
  ASSERT_EQ(j["ops"].size(), 2u) << j["ops"].dump();
  for (const auto& op : j["ops"]) EXPECT_EQ(op["status"], "installed") << op.dump();
  ASSERT_EQ(j["eager"]["losses"].size(), 6u);
  ASSERT_EQ(j["kernels"]["losses"].size(), 6u);
  EXPECT_TRUE(j["first_step_outside"].is_null());
  // The kernels really ran: their rounding differs from libtorch's somewhere, within the band.
  EXPECT_GT(j["final_parameter_distance"].get<double>(), 0.0);
  EXPECT_LT(j["final_parameter_distance"].get<double>(), 1e-4);
  EXPECT_LE(j["max_drift"].get<double>(), 1e-4);
  // The losses fall: the model trains on the data kernelgate makes.
  EXPECT_LT(j["eager"]["losses"][5].get<double>(), j["eager"]["losses"][0].get<double>());
  for (const auto& s : j["per_step"]) {
    EXPECT_GT(s["eager_seconds"].get<double>(), 0.0);
    EXPECT_GT(s["kernels_seconds"].get<double>(), 0.0);
  }
  const std::string svg = kg::e2e::read(dir_ / "out" / "loss.svg");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(svg.find("inside"), std::string::npos);
}

TEST_F(TrainCheck, HonestPythonKernelInBackendBenchLayoutStaysInTheBand) {
  const auto r = run("train-check " + kTrain + "honest_python --out " + (dir_ / "out").string() + " --steps 4", 600);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = train_json(dir_ / "out");
  EXPECT_EQ(j["verdict"], "inside");
  ASSERT_EQ(j["ops"].size(), 1u);
  EXPECT_EQ(j["ops"][0]["kind"], "python");
  EXPECT_GT(j["final_parameter_distance"].get<double>(), 0.0);
}

TEST_F(TrainCheck, GeluBiasedByOneThousandthLeavesTheBandAndTheStepIsNamed) {
  const auto r = run("train-check " + kTrain + "biased --out " + (dir_ / "out").string() + " --steps 6", 600);
  ASSERT_EQ(r.status, 1) << r.output;
  const auto j = train_json(dir_ / "out");
  EXPECT_EQ(j["verdict"], "outside");
  // Measured here: inside at step 0 (the bias moves the first loss by less than the band), outside
  // from step 1 on. The step is named in train.json, on the console and in the plot.
  ASSERT_TRUE(j["first_step_outside"].is_number()) << j.dump();
  const int first = j["first_step_outside"];
  EXPECT_LE(first, 2);
  EXPECT_NE(r.output.find("OUTSIDE the band"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("from step " + std::to_string(first)), std::string::npos) << r.output;
  EXPECT_GT(j["max_drift"].get<double>(), 1e-4);
  const auto& s = j["per_step"][static_cast<size_t>(first)];
  EXPECT_GT(std::abs(s["drift"].get<double>()), s["band"].get<double>()) << s.dump();
  EXPECT_NE(kg::e2e::read(dir_ / "out" / "loss.svg").find("first step outside the band: " + std::to_string(first)), std::string::npos);
}

// The premise of the test above: the biased gelu passes the forward suites judged at atol 1e-2,
// and fails them at the competition profile's tolerances.
TEST_F(TrainCheck, BiasedGeluPassesTheForwardSuitesAtALooseTolerance) {
  const auto loose = run("eval " + kTrain + "biased --policy " + kTrain + "loose.toml --no-timing --out " + (dir_ / "loose").string(), 600);
  EXPECT_EQ(loose.status, 0) << loose.output;
  const auto strict = run("eval " + kTrain + "biased --no-timing --out " + (dir_ / "strict").string(), 600);
  EXPECT_EQ(strict.status, 1) << strict.output;
}

TEST_F(TrainCheck, KernelCallingTheOpItReplacesStopsTheRunByName) {
  const auto r = run("train-check " + kTrain + "calls_itself --out " + (dir_ / "out").string() + " --steps 3", 600);
  ASSERT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("calls aten::gelu itself"), std::string::npos) << r.output;
  const auto j = train_json(dir_ / "out");
  EXPECT_EQ(j["verdict"], "outside");
  EXPECT_EQ(j["first_step_outside"], 0);
  EXPECT_NE(j["kernels"]["error"].get<std::string>().find("calls aten::gelu itself"), std::string::npos);
}

TEST_F(TrainCheck, ProblemFileWithoutGetBatchTrainsTowardsATarget) {
  const std::string model = " --model " + kTrain + "models/mlp.py";
  const auto honest = run("train-check " + kTrain + "honest" + model + " --out " + (dir_ / "h").string() + " --steps 8", 600);
  ASSERT_EQ(honest.status, 0) << honest.output;
  EXPECT_EQ(train_json(dir_ / "h")["verdict"], "inside");
  const auto biased = run("train-check " + kTrain + "biased" + model + " --out " + (dir_ / "b").string() + " --steps 8", 600);
  ASSERT_EQ(biased.status, 1) << biased.output;
  const auto j = train_json(dir_ / "b");
  EXPECT_EQ(j["verdict"], "outside");
  EXPECT_GE(j["first_step_outside"].get<int>(), 1);
}

TEST_F(TrainCheck, ModelThatDivergesInEagerIsTheModelsFault) {
  const auto r =
      run("train-check " + kTrain + "honest --model " + kTrain + "models/diverges.py --out " + (dir_ / "out").string() + " --steps 4", 600);
  ASSERT_EQ(r.status, 2) << r.output;
  const auto j = train_json(dir_ / "out");
  EXPECT_EQ(j["verdict"], "error");
  EXPECT_TRUE(j["problem_fault"].get<bool>());
  EXPECT_NE(j["error"].get<std::string>().find("the model's fault"), std::string::npos) << j["error"];
  EXPECT_NE(j["error"].get<std::string>().find("not finite"), std::string::npos) << j["error"];
}

TEST_F(TrainCheck, ModelThatDoesNotLoadIsTheModelsFault) {
  const auto r =
      run("train-check " + kTrain + "honest --model " + kTrain + "models/does_not_load.py --out " + (dir_ / "out").string() + " --steps 2",
          600);
  ASSERT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("this model file is broken"), std::string::npos) << r.output;
  const auto j = train_json(dir_ / "out");
  EXPECT_TRUE(j["problem_fault"].get<bool>());
  EXPECT_NE(j["error"].get<std::string>().find("does not load"), std::string::npos) << j["error"];
}

TEST_F(TrainCheck, SubmissionWhoseOpsDoNotBuildFails) {
  kg::e2e::write(dir_ / "sub" / "gelu__default" / "gelu__default_implementation.cpp", "this is not C++\n");
  const auto r = run("train-check " + (dir_ / "sub").string() + " --out " + (dir_ / "out").string() + " --steps 2", 600);
  ASSERT_EQ(r.status, 1) << r.output;
  const auto j = train_json(dir_ / "out");
  EXPECT_EQ(j["verdict"], "error");
  EXPECT_TRUE(j["submission_fault"].get<bool>());
  EXPECT_NE(j["ops"][0]["status"].get<std::string>().find("compile_error"), std::string::npos) << j["ops"].dump();
}

TEST_F(TrainCheck, BadUsageIsExitTwoNamingTheProblem) {
  const std::string sub = kTrain + "honest";
  struct Case {
    std::string args, says;
  } cases[] = {
      {sub, "--out is required"},
      {sub + " --out " + (dir_ / "o").string() + " --steps 0", "--steps must be"},
      {sub + " --out " + (dir_ / "o").string() + " --steps x", "--steps must be"},
      {sub + " --out " + (dir_ / "o").string() + " --seed -1", "--seed must be"},
      {sub + " --out " + (dir_ / "o").string() + " --device tpu", "--device must be"},
      {sub + " --out " + (dir_ / "o").string() + " --policy no-such-profile", "no-such-profile"},
      {sub + " --out " + (dir_ / "o").string() + " --model /no/such/model.py", "/no/such/model.py"},
      {(dir_ / "missing").string() + " --out " + (dir_ / "o").string(), "no submission directory"},
      {"--out " + (dir_ / "o").string(), "no submission directory given"},
      {sub + " --out " + (dir_ / "o").string() + " --bogus", "unknown option --bogus"},
  };
  for (const Case& c : cases) {
    const auto r = run("train-check " + c.args, 120);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
  }
}

}  // namespace

namespace {

nlohmann::json grad_json(const fs::path& out) { return nlohmann::json::parse(kg::e2e::read(out / "grad.json")); }

const nlohmann::json* target(const nlohmann::json& j, const std::string& op) {
  for (const auto& t : j["targets"])
    if (t["op"] == op) return &t;
  return nullptr;
}

// grad-check installs the ops but runs no model: no python needed unless a python op is installed.
class GradCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = kg::e2e::temp_dir(std::string("grad-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(GradCheck, HonestReluAndThresholdBackwardMatchEagerAutograd) {
  const auto r = run("grad-check " + kTrain + "grad_relu --out " + dir_.string(), 600);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = grad_json(dir_);
  // relu.default: its own kernel and threshold_backward's; threshold.default: threshold_backward's.
  const auto* relu = target(j, "relu.default");
  const auto* threshold = target(j, "threshold.default");
  ASSERT_TRUE(relu && threshold) << j["targets"].dump();
  EXPECT_EQ((*relu)["because"].size(), 2u);
  EXPECT_GT((*relu)["passed"].get<int>(), 0);
  EXPECT_GT((*threshold)["passed"].get<int>(), 0);
  for (const auto* t : {relu, threshold}) {
    EXPECT_EQ((*t)["failed"], 0) << t->dump();
    EXPECT_EQ((*t)["nondeterministic"], 0) << t->dump();
  }
}

TEST_F(GradCheck, GeluBackwardMissingATermIsWrongOnGelusGradient) {
  const auto r = run("grad-check " + kTrain + "grad_wrong --out " + dir_.string(), 600);
  ASSERT_EQ(r.status, 1) << r.output;
  const auto j = grad_json(dir_);
  const auto* gelu = target(j, "gelu.default");
  ASSERT_TRUE(gelu) << j.dump();
  EXPECT_GT((*gelu)["failed"].get<int>(), 0);
  bool named = false;
  for (const auto& s : (*gelu)["samples"])
    if (s["status"] == "fail" && s["detail"].get<std::string>().find("gradient of argument 'self'") != std::string::npos) named = true;
  EXPECT_TRUE(named) << gelu->dump();
}

TEST_F(GradCheck, AtomicsLikeAccumulationOrderIsNondeterministicNotWrong) {
  const auto r = run("grad-check " + kTrain + "grad_nondeterministic --out " + dir_.string(), 600);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = grad_json(dir_);
  const auto* emb = target(j, "embedding.default");
  ASSERT_TRUE(emb) << j.dump();
  EXPECT_GT((*emb)["nondeterministic"].get<int>(), 0) << emb->dump();
  EXPECT_EQ((*emb)["failed"], 0) << emb->dump();
  EXPECT_NE(r.output.find("nondeterministic"), std::string::npos);
}

TEST_F(GradCheck, BadUsageIsExitTwo) {
  EXPECT_EQ(run("grad-check " + kTrain + "grad_relu", 60).status, 2);
  const auto suite = run("grad-check " + kTrain + "grad_relu --out " + dir_.string() + " --suite no-such-suite", 60);
  EXPECT_EQ(suite.status, 2);
  EXPECT_NE(suite.output.find("unknown suite"), std::string::npos) << suite.output;
  EXPECT_EQ(run("grad-check --out " + dir_.string(), 60).status, 2);
}

}  // namespace

namespace {

// A python kernel with its own torch.autograd.Function is installed at the Autograd key: its own
// backward is what grad-check and training run. The honest one passes every sample it accepts (it
// refuses approximate='tanh'); the one whose backward forgets a term fails where its forward is
// right, which aten's derivative formula would have hidden.
class PythonAutogradFunction : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!python_kind()) GTEST_SKIP() << "kg-runner's python plugin is not built";
    dir_ = kg::e2e::temp_dir(std::string("pyfn-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(PythonAutogradFunction, HonestBackwardMatchesEagerAutograd) {
  const auto r = run("grad-check " + kTrain + "grad_python_function --out " + dir_.string(), 600);
  const auto j = grad_json(dir_);
  const auto* gelu = target(j, "gelu.default");
  ASSERT_TRUE(gelu) << r.output;
  EXPECT_GE((*gelu)["passed"].get<int>(), 10) << gelu->dump();
  for (const auto& s : (*gelu)["samples"])
    if (s["status"] == "fail") EXPECT_NE(s["sample"].get<std::string>().find("tanh"), std::string::npos) << s.dump();
}

TEST_F(PythonAutogradFunction, WrongBackwardIsFoundByGradCheckAndLeavesTheTrainingBand) {
  const auto g = run("grad-check " + kTrain + "grad_python_function_wrong --out " + (dir_ / "g").string(), 600);
  ASSERT_EQ(g.status, 1) << g.output;
  const auto j = grad_json(dir_ / "g");
  const auto* gelu = target(j, "gelu.default");
  ASSERT_TRUE(gelu);
  bool plain_sample_failed = false;
  for (const auto& s : (*gelu)["samples"])
    if (s["status"] == "fail" && s["sample"].get<std::string>().find("tanh") == std::string::npos &&
        s["detail"].get<std::string>().find("gradient of argument 'self'") != std::string::npos)
      plain_sample_failed = true;
  EXPECT_TRUE(plain_sample_failed) << gelu->dump();
  const auto t = run("train-check " + kTrain + "grad_python_function_wrong --out " + (dir_ / "t").string() + " --steps 4", 600);
  ASSERT_EQ(t.status, 1) << t.output;
  const auto tj = train_json(dir_ / "t");
  ASSERT_TRUE(tj["first_step_outside"].is_number()) << tj.dump();
  EXPECT_LE(tj["first_step_outside"].get<int>(), 2);
}

}  // namespace

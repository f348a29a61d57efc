// kg_train's pure parts: where two loss curves part (compare_runs), train.json's fields and the
// SVG plot, on made-up runs.
#include "kernelgate/train_check.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace {

using kg::train::compare_runs;
using kg::train::TrainReport;
using kg::train::TrainRun;

TrainRun run_of(std::vector<double> losses) {
  TrainRun r;
  r.losses = std::move(losses);
  r.step_s.assign(r.losses.size(), 0.01);
  r.parameters = {1.0, 2.0, 2.0};
  return r;
}

TEST(CompareRuns, IdenticalRunsAreInside) {
  const TrainRun e = run_of({4.0, 3.5, 3.0});
  const auto d = compare_runs(e, e, 3, 1e-4, 1e-5);
  EXPECT_TRUE(d.inside);
  EXPECT_EQ(d.first_outside, -1);
  EXPECT_EQ(d.max_abs, 0.0);
  EXPECT_EQ(d.parameter_distance, 0.0);
}

TEST(CompareRuns, FirstStepOutsideIsNamedAndTheBandScalesWithTheLoss) {
  const TrainRun e = run_of({4.0, 3.5, 3.0, 2.5});
  // Band at step k: 1e-4 + 1e-5 * loss. 1.3e-4 is inside at loss 4 (1.4e-4), outside at 2.5 (1.25e-4).
  const TrainRun k = run_of({4.0 + 1.3e-4, 3.5 - 1.3e-4, 3.0 + 1.29e-4, 2.5 + 1.3e-4});
  const auto d = compare_runs(e, k, 4, 1e-4, 1e-5);
  EXPECT_FALSE(d.inside);
  EXPECT_EQ(d.first_outside, 3);
  EXPECT_NEAR(d.max_abs, 1.3e-4, 1e-9);
}

TEST(CompareRuns, AKernelRunThatStoppedEarlyLeftTheBandWhereItStopped) {
  const TrainRun e = run_of({4.0, 3.5, 3.0});
  const TrainRun k = run_of({4.0, 3.5});
  const auto d = compare_runs(e, k, 3, 1e-4, 1e-5);
  EXPECT_FALSE(d.inside);
  EXPECT_EQ(d.first_outside, 2);
}

TEST(CompareRuns, NonFiniteLossIsOutside) {
  const TrainRun e = run_of({4.0, 3.5});
  const TrainRun k = run_of({4.0, NAN});
  const auto d = compare_runs(e, k, 2, 1e-4, 1e-5);
  EXPECT_FALSE(d.inside);
  EXPECT_EQ(d.first_outside, 1);
  EXPECT_TRUE(std::isinf(d.max_abs));
}

TEST(CompareRuns, ParameterDistanceIsRelativeL2) {
  TrainRun e = run_of({1.0});
  TrainRun k = run_of({1.0});
  k.parameters = {1.0, 2.0, 2.3};  // ||(0, 0, 0.3)|| / ||(1, 2, 2)|| = 0.1
  EXPECT_NEAR(compare_runs(e, k, 1, 1e-4, 1e-5).parameter_distance, 0.1, 1e-12);
  k.parameters = {1.0};
  EXPECT_TRUE(std::isnan(compare_runs(e, k, 1, 1e-4, 1e-5).parameter_distance));
}

TrainReport report() {
  TrainReport r;
  r.model = "a <model> & more";
  r.device = "cpu";
  r.steps = 3;
  r.seed = 7;
  r.loss_atol = 1e-4;
  r.loss_rtol = 1e-5;
  r.eager = run_of({4.0, 3.5, 3.0});
  r.kernels = run_of({4.0, 3.6, NAN});
  r.drift = compare_runs(r.eager, r.kernels, 3, r.loss_atol, r.loss_rtol);
  r.verdict = "outside";
  r.ops.push_back({"gelu.default", "cpu", "installed"});
  return r;
}

TEST(TrainJson, PerStepFiguresAndNullsForWhatIsNotANumber) {
  const auto j = nlohmann::json::parse(kg::train::train_json(report()));
  EXPECT_EQ(j["verdict"], "outside");
  EXPECT_EQ(j["first_step_outside"], 1);
  ASSERT_EQ(j["per_step"].size(), 3u);
  EXPECT_NEAR(j["per_step"][1]["drift"].get<double>(), 0.1, 1e-12);
  EXPECT_TRUE(j["per_step"][2]["kernels_loss"].is_null());
  EXPECT_TRUE(j["max_drift"].is_null());  // infinite
  EXPECT_EQ(j["ops"][0]["op"], "gelu.default");
  EXPECT_EQ(j["seed"], 7);
  EXPECT_NEAR(j["band"]["loss_atol"].get<double>(), 1e-4, 1e-15);
}

TEST(LossPlot, BothCurvesTheBandAndEscapedText) {
  const std::string svg = kg::train::loss_plot_svg(report());
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("a &lt;model&gt; &amp; more"), std::string::npos);
  EXPECT_EQ(svg.find("<model>"), std::string::npos);
  size_t lines = 0;
  for (size_t p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1)) ++lines;
  EXPECT_EQ(lines, 3u);  // eager, kernels, drift
  EXPECT_NE(svg.find("<polygon"), std::string::npos);
  EXPECT_NE(svg.find("first step outside the band: 1"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(BundledModel, IsTheGptOfNanoGptsShape) {
  const std::string& s = kg::train::bundled_model_source();
  EXPECT_NE(s.find("LAYERS = 4"), std::string::npos);
  EXPECT_NE(s.find("HEADS = 4"), std::string::npos);
  EXPECT_NE(s.find("EMBED = 128"), std::string::npos);
  EXPECT_NE(s.find("BLOCK = 64"), std::string::npos);
  EXPECT_NE(s.find("def get_batch(step)"), std::string::npos);
}

}  // namespace

// OUT/train.json and OUT/loss.svg (docs/training.md has the fields).
#include "kernelgate/results.h"
#include "kernelgate/train_check.h"

#include "ops_json.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

namespace kg::train {
namespace {

using nlohmann::json;

// JSON has no NaN or infinity: null.
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json numbers(const std::vector<double>& v) {
  json a = json::array();
  for (double x : v) a.push_back(number(x));
  return a;
}

json run_json(const TrainRun& run) {
  json j;
  j["losses"] = numbers(run.losses);
  j["step_seconds"] = numbers(run.step_s);
  j["mean_step_seconds"] = number(run.mean_step_s());
  j["parameters"] = run.parameters.size();
  j["error"] = run.error.empty() ? json(nullptr) : json(run.error);
  return j;
}

}  // namespace

nlohmann::json installed_ops_json(const std::vector<InstalledOp>& ops) {
  json a = json::array();
  for (const InstalledOp& op : ops) a.push_back({{"op", op.op}, {"kind", op.kind}, {"status", op.status}});
  return a;
}

std::string train_json(const TrainReport& r) {
  json j;
  j["kind"] = "kernelgate train-check";
  j["verdict"] = r.verdict;
  j["error"] = r.error.empty() ? json(nullptr) : json(r.error);
  j["problem_fault"] = r.problem_fault;
  j["submission_fault"] = r.submission_fault;
  j["model"] = r.model;
  j["device"] = r.device;
  j["steps"] = r.steps;
  j["seed"] = r.seed;
  j["band"] = {{"loss_atol", r.loss_atol}, {"loss_rtol", r.loss_rtol}};
  j["ops"] = installed_ops_json(r.ops);
  j["eager"] = run_json(r.eager);
  j["kernels"] = run_json(r.kernels);
  json steps = json::array();
  const size_t n = std::max(r.eager.losses.size(), r.kernels.losses.size());
  for (size_t i = 0; i < n; ++i) {
    json s{{"step", i}};
    const bool e = i < r.eager.losses.size(), k = i < r.kernels.losses.size();
    s["eager_loss"] = e ? number(r.eager.losses[i]) : json(nullptr);
    s["kernels_loss"] = k ? number(r.kernels.losses[i]) : json(nullptr);
    s["drift"] = e && k ? number(r.kernels.losses[i] - r.eager.losses[i]) : json(nullptr);
    s["band"] = e ? number(r.loss_atol + r.loss_rtol * std::fabs(r.eager.losses[i])) : json(nullptr);
    s["eager_seconds"] = e && i < r.eager.step_s.size() ? number(r.eager.step_s[i]) : json(nullptr);
    s["kernels_seconds"] = k && i < r.kernels.step_s.size() ? number(r.kernels.step_s[i]) : json(nullptr);
    steps.push_back(s);
  }
  j["per_step"] = steps;
  j["first_step_outside"] = r.drift.first_outside < 0 ? json(nullptr) : json(r.drift.first_outside);
  j["max_drift"] = number(r.drift.max_abs);
  j["max_drift_step"] = r.drift.max_abs_step < 0 ? json(nullptr) : json(r.drift.max_abs_step);
  j["final_parameter_distance"] = number(r.drift.parameter_distance);
  const double te = r.eager.mean_step_s(), tk = r.kernels.mean_step_s();
  j["step_time_ratio"] = std::isfinite(te) && std::isfinite(tk) && tk > 0 ? json(te / tk) : json(nullptr);
  j["wall_seconds"] = r.wall_s;
  return j.dump(2) + "\n";
}

void write_train_outputs(const TrainReport& r, const std::string& out_dir) {
  std::filesystem::create_directories(out_dir);
  results::write_atomically((std::filesystem::path(out_dir) / "train.json").string(), train_json(r));
  results::write_atomically((std::filesystem::path(out_dir) / "loss.svg").string(), loss_plot_svg(r));
}

}  // namespace kg::train

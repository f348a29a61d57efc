// train-check: "can I train with these kernels?" as a number (docs/training.md). A model (the
// bundled small GPT, or a problem file in KernelBench's layout) is trained N steps from a fixed
// seed twice in sandboxed runners: once on libtorch's own kernels, once with every op of the
// submission installed over aten's kernel for the device (forward and backward: autograd's
// formulas call the same aten ops). The per-step losses are compared within the policy's band.
#pragma once

#include "kernelgate/names.h"
#include "kernelgate/policy.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace kg::train {

struct TrainOptions {
  std::string submission;  // the submission directory (any kind but nvrtc)
  std::string model_file;  // a problem file; "" = the bundled GPT (bundled_model_source())
  std::string out_dir;     // train.json and loss.svg go here; also the runners' staging
  int steps = 0;           // 0: the policy's train.steps
  uint64_t seed = 1;
  names::Device device = names::Device::Cpu;
  std::string runner_path;  // "" = beside the kernelgate binary
};

// One training run: what the runner reported.
struct TrainRun {
  std::vector<double> losses;      // per step; shorter than the steps asked when a loss was not finite
  std::vector<double> step_s;      // seconds per step, the runner's clock
  std::vector<double> parameters;  // final parameters, flattened
  std::string error;               // "" when it ran
  // The mean of step_s; NaN when no step ran.
  double mean_step_s() const {
    double sum = 0;
    for (double s : step_s) sum += s;
    return step_s.empty() ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(step_s.size());
  }
};

// One op of the submission and what became of it.
struct InstalledOp {
  std::string op;      // "gelu.default"
  std::string kind;    // cpu, cuda, python
  std::string status;  // "installed", or why not ("compile_error: ...", "not installable: ...")
};

// Where the two loss curves part (pure: band.cc).
struct Drift {
  int first_outside = -1;         // the first step outside the band, -1 when none
  double max_abs = 0;             // the largest |kernels - eager| over the steps both runs have
  int max_abs_step = -1;          // where it is
  double parameter_distance = 0;  // ||p_kernels - p_eager|| / ||p_eager|| (final parameters), NaN when the counts differ
  bool inside = false;            // every step inside the band and both runs complete
};
Drift compare_runs(const TrainRun& eager, const TrainRun& kernels, int steps, double atol, double rtol);

struct TrainReport {
  std::string model;  // "bundled GPT" or the problem file's path
  std::string device;
  int steps = 0;
  uint64_t seed = 0;
  double loss_atol = 0, loss_rtol = 0;
  std::vector<InstalledOp> ops;
  TrainRun eager, kernels;
  Drift drift;
  // "inside", "outside", or "error": kernelgate could not get an answer. problem_fault says whose
  // error it is: the model's (it does not load, or eager's own training is not finite) or not.
  std::string verdict;
  bool problem_fault = false;
  bool submission_fault = false;  // an error that is the submission's: none of its ops builds or installs
  std::string error;
  double wall_s = 0;
};

// Builds the submission's ops, trains twice and compares. Never throws for a bad submission or
// model: those are the report's error. Throws std::runtime_error for bad options (no submission
// directory, an unreadable model file).
TrainReport train_check(const TrainOptions& options, const policy::Policy& policy);

// OUT/train.json (atomically) and OUT/loss.svg.
void write_train_outputs(const TrainReport& report, const std::string& out_dir);
std::string train_json(const TrainReport& report);
// Both loss curves, the band's edge and the first step outside it, as an SVG document.
std::string loss_plot_svg(const TrainReport& report);

// The bundled GPT's source (train/models/gpt.py).
const std::string& bundled_model_source();

}  // namespace kg::train

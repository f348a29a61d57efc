// grad-check: backward correctness (docs/training.md, "grad-check"). With every op of a submission
// installed over aten in a sandboxed runner, each forward overload it provides — and the forward
// overload whose autograd formula calls each backward overload it provides (threshold_backward ->
// relu, ...) — is differentiated on the suite's samples: the gradients of (out * w).sum(), w random,
// with respect to every floating argument, compared with eager autograd's at the policy's
// tolerances. Two identical calls that disagree are nondeterministic, reported as such.
#pragma once

#include "kernelgate/names.h"
#include "kernelgate/policy.h"
#include "kernelgate/train_check.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kg::train {

struct GradOptions {
  std::string submission;
  std::string out_dir;         // grad.json goes here; also the runners' staging
  std::string suite = "auto";  // harness suite name or path; "auto" as eval's
  uint64_t seed = 1;
  names::Device device = names::Device::Cpu;
  std::string runner_path;
};

struct GradSample {
  std::string sample;  // the suite's line
  std::string status;  // pass, fail, nondeterministic, skipped
  std::string detail;  // the mismatch, the spread, or why skipped
};

struct GradTarget {
  std::string op;                    // the forward overload differentiated ("relu.default")
  std::vector<std::string> because;  // the submission's ops that made it a target
  int passed = 0, failed = 0, nondeterministic = 0, skipped = 0;
  std::vector<GradSample> samples;
  std::string error;        // why it could not be checked: the submission's (an install, a load that failed)
  std::string not_checked;  // why it was not checked: kernelgate's limit (no suite has samples for it)
};

struct GradReport {
  std::string device, suite;
  uint64_t seed = 0;
  std::vector<InstalledOp> ops;
  std::vector<GradTarget> targets;
  std::string error;
  bool submission_fault = false;
  double wall_s = 0;
};

// The forward overloads whose autograd formula calls `backward_op` ("threshold_backward.default"
// -> {"relu.default", "threshold.default"}); empty when it is not a backward overload kernelgate knows.
std::vector<std::string> forward_ops_of(const std::string& backward_op);

GradReport grad_check(const GradOptions& options, const policy::Policy& policy);
std::string grad_json(const GradReport& report);
// 0 every checked sample passed (nondeterministic ones included), 1 a sample failed or a target
// could not be checked for the submission's sake (it does not install, none of its ops builds),
// 2 kernelgate's own error or nothing it could check (no suite has samples for any target).
int grad_exit_code(const GradReport& report);

}  // namespace kg::train

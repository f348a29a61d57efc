// kernelgate kernelbench: KernelBench's format judged as it is. A problem file (class Model,
// get_inputs(), get_init_inputs()) is the organiser's reference; a solution file (class ModelNew)
// is the candidate. Each runs in its own sandboxed runner (the python kind's interpreter), never
// beside the other: the supervisor carries the constructor's arguments, the inputs, the
// reference's parameters and the outputs between them, and judges ModelNew as any op is judged.
#pragma once

#include "kernelgate/harness.h"
#include "kernelgate/policy.h"

#include <string>
#include <utility>
#include <vector>

namespace kg::kernelbench {

// One problem and the solution judged against it; `name` is the problem file's stem
// ("19_ReLU"), the op name results.json gives it.
struct Pair {
  std::string name;
  std::string problem;   // absolute path of the problem file
  std::string solution;  // absolute path of the solution file
};

// The pairs `kernelgate eval --problem P S` names. Two files: that pair. Two folders: every
// problem `*.py` of P with the solution of S that has its file name, or, KernelBench's generated
// names, one named `..._problem_<N>_...py` for the problem whose name starts `<N>_`; problems
// with no solution (or more than one) go into `left_out` with the reason, as do solutions that
// match no problem. Throws std::runtime_error naming the path and the problem with it (missing,
// a file beside a folder, not .py).
std::vector<Pair> pairs(const std::string& problem, const std::string& solution,
                        std::vector<std::pair<std::string, std::string>>* left_out);

// Judges every pair (options: seed, timing, out_dir, runner_path, verbose) into one report, an op
// per pair (kind "python", suite "kernelbench"). Never throws for a pair's own fault: a problem
// that cannot be loaded or run is that pair's `error` ("the problem's fault: ..."), a solution
// that cannot is a failure with its traceback.
harness::Report evaluate(const std::vector<Pair>& pairs, const harness::EvalOptions& options, const policy::Policy& policy);

// The suite name results.json gives KernelBench pairs.
inline constexpr const char* kSuite = "kernelbench";

}  // namespace kg::kernelbench

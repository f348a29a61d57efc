// kernelgate harness: what to run (suites, inputs), what "correct" means (comparison), and the
// evaluation of a whole submission into a report.
#pragma once

#include "kernelgate/policy.h"
#include "kernelgate/trace.h"

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kg::harness {

// ---- dtypes --------------------------------------------------------------------------------
// Short trace names (f32, f16, bf16, i64, b8, ...) <-> ScalarType.
bool dtype_from_short(const std::string& s, c10::ScalarType* out);
std::string short_dtype(c10::ScalarType t);

// ---- samples -------------------------------------------------------------------------------

// How the supervisor fills tensor values. Values are never taken from data files.
enum class ValueFamily {
  Normal,   // mixed signs, standard normal, some wide-range entries
  Special,  // Normal plus NaN, +-inf, -0.0, denormals and huge magnitudes scattered in
  Positive, // strictly positive (for ops whose domain needs it)
};
const char* family_name(ValueFamily f);

// Where a sample's inputs come from, for the failure classifier.
enum class InputTrait : unsigned {
  SpecialValues = 1u << 0,
  Broadcasting = 1u << 1,
  NonContiguous = 1u << 2,
  LowPrecision = 1u << 3,  // a dtype other than f32/f64/integers
  LargeSize = 1u << 4,
  EmptyOrScalar = 1u << 5,
};

struct Sample {
  std::string op;            // "add.Tensor"
  trace::Call call;          // argument spec in trace syntax
  ValueFamily family = ValueFamily::Normal;
  std::string label;         // short human description ("broadcast [4,1,8]+[3,8]")
  unsigned traits = 0;       // InputTrait bits the suite declares (broadcasting cannot be derived)
};

// Suite names this build has.
std::vector<std::string> suite_names();
// Samples of a suite for `op`. Throws std::runtime_error for an unknown suite.
std::vector<Sample> suite_samples(const std::string& suite, const std::string& op);
// Ops a suite covers.
std::vector<std::string> suite_ops(const std::string& suite);

// Draws concrete arguments for `schema` from a sample. Deterministic in (seed, sample index).
// Positional args come from the spec, keyword args by name, the rest from schema defaults.
std::vector<c10::IValue> make_inputs(const c10::FunctionSchema& schema, const Sample& sample, std::mt19937_64& rng);
// Input traits of a sample, from its spec and concrete inputs.
unsigned input_traits(const Sample& sample, const std::vector<c10::IValue>& inputs);
std::string trait_names(unsigned traits);

// ---- reference -----------------------------------------------------------------------------
// Calls the aten overload through the dispatcher. `args` are consumed (mutated by in-place ops);
// returns the op's returns.
std::vector<c10::IValue> call_reference(const c10::FunctionSchema& schema, std::vector<c10::IValue>& args);

// ---- comparison ----------------------------------------------------------------------------

struct Mismatch {
  std::string category;      // nan_mask, inf_mask, value_mismatch, dtype_mismatch, shape_mismatch, input_mutated
  std::string where;         // "return 0", "argument 'self'"
  std::string detail;        // one line a human or a model can act on
  double max_abs_err = 0;
  double max_rel_err = 0;
  double max_ulp = 0;
  int64_t mismatches = 0;
  int64_t numel = 0;
  std::vector<int64_t> first_index;
  double expected = 0;
  double actual = 0;
};

// Compares one tensor (or nested value) with its reference. Empty result: equal under `tol`.
std::optional<Mismatch> compare_values(const c10::IValue& expected, const c10::IValue& actual,
                                       const policy::Policy& policy, const std::string& op, const std::string& where);
// Bitwise equality for "inputs unchanged" checks (NaN == NaN, -0.0 != 0.0).
std::optional<Mismatch> compare_exact(const c10::IValue& before, const c10::IValue& after, const std::string& where);

// Judges a whole call: returns, mutated arguments (in-place/out=) against the reference's,
// and unchanged inputs for every argument the schema does not let the op write.
std::vector<Mismatch> judge_call(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs_before,
                                 const std::vector<c10::IValue>& ref_returns, const std::vector<c10::IValue>& ref_args_after,
                                 const std::vector<c10::IValue>& cand_returns, const std::vector<c10::IValue>& cand_args_after,
                                 const policy::Policy& policy, const std::string& op);

// ---- evaluation ----------------------------------------------------------------------------

struct Failure {
  std::string category;   // a Mismatch category or compile_error, runtime_error, crash, timeout, memory_limit
  std::string sample;     // the input spec in trace syntax (paste into `kernelgate repro`)
  std::string label;
  std::string family;
  unsigned traits = 0;
  std::string message;
  std::optional<Mismatch> mismatch;
};

struct Violation {
  std::string rule;       // THREATS.md rule id
  std::string evidence;
};

struct Timing {
  double candidate_median_s = 0;
  double eager_median_s = 0;
  int reps = 0;
  std::string sample;
};

struct OpResult {
  std::string op;
  std::string kind;        // cpu | cuda | nvrtc
  std::string verdict;     // pass | fail | rejected | error
  int total = 0;
  int passed = 0;
  // Samples the reference itself cannot run on this device/libtorch (e.g. f16 relu on CPU in
  // libtorch 1.13): not tests, listed with the reference's reason.
  std::vector<std::pair<std::string, std::string>> skipped;
  std::vector<Failure> failures;
  std::vector<Violation> violations;
  std::optional<Timing> timing;
  std::optional<double> speedup;
  std::string error;       // for verdict "error": what went wrong (build error, no such op)
  std::string build_log;
  double build_s = 0;
  double eval_s = 0;
  // Failure concentration: trait name -> failures with that trait.
  std::map<std::string, int> failure_traits;
};

struct EvalOptions {
  std::string submission;
  std::string suite = "smoke";
  std::vector<std::string> ops;   // empty: every op folder
  std::string device = "cpu";
  uint64_t seed = 0;
  bool seed_given = false;
  std::string out_dir = "kernelgate-out";
  std::string runner_path;        // empty: loader::default_runner_path()
  bool timing = true;
  bool verbose = false;
  // Self-check: no submission; every op of the suite is run by the runner calling the aten
  // overload itself, through the same sandbox, protocol and comparison. Must pass everything.
  bool self_check = false;
};

struct Report {
  std::string version;
  std::string torch_version;
  std::string device;
  std::string suite;
  std::string policy;
  std::string submission;
  uint64_t seed = 0;
  bool seed_given = false;
  std::vector<OpResult> ops;
  // Submission-level problems that are not any op's (unusable folders).
  std::vector<std::pair<std::string, std::string>> problems;
  double wall_s = 0;
};

// Evaluates every op of a submission. Throws std::runtime_error only for configuration errors
// (unreadable submission, unknown suite, device not available); every per-op problem is in the report.
Report evaluate(const EvalOptions& options, const policy::Policy& policy);

// results.json text.
std::string report_json(const Report& report);
// The terminal table.
std::string report_table(const Report& report);
// Exit status for `kernelgate eval`: 0 when every op passed, else 1.
int report_exit_code(const Report& report);

}  // namespace kg::harness

// kernelgate harness: what to run (suites, inputs), what "correct" means (comparison), and the
// evaluation of a whole submission into a report.
#pragma once

#include "kernelgate/catalogue.h"
#include "kernelgate/names.h"
#include "kernelgate/policy.h"
#include "kernelgate/trace.h"

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace kg::loader {
class RunnerPool;
struct CallOutcome;
struct RunnerOptions;
struct BuildOptions;
}  // namespace kg::loader
namespace kg::sandbox {
struct Record;
}  // namespace kg::sandbox

namespace kg::harness {

// ---- dtypes --------------------------------------------------------------------------------
// The ScalarType of a dtype (names.h) and back, for the dtypes BackendBench abbreviates; nullopt
// for the others (u16..u64, which no sample makes; fp8, quantized types).
std::optional<c10::ScalarType> scalar_type_of(names::Dtype d);
std::optional<names::Dtype> dtype_of(c10::ScalarType t);
// Short trace names (f32, f16, bf16, i64, b8, ...) <-> ScalarType; short_dtype falls back to
// c10's own name for a ScalarType without one.
bool dtype_from_short(const std::string& s, c10::ScalarType* out);
std::string short_dtype(c10::ScalarType t);

// ---- samples -------------------------------------------------------------------------------

// How the supervisor fills tensor values. Values are never taken from data files.
enum class ValueFamily {
  Normal,    // mixed signs, standard normal, some wide-range entries
  Special,   // Normal plus NaN, +-inf, -0.0, denormals and huge magnitudes scattered in
  Positive,  // strictly positive (for ops whose domain needs it)
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

// What values one argument needs so that the reference computes something meaningful rather
// than raising (an index out of range) or returning garbage by construction (a negative
// variance). Applied after the sample's family has been drawn; only tensors are affected, and
// the index rules only integer tensors (a bool tensor in an index position is a mask).
enum class ValueRule {
  Index,        // integers in [0, bound)
  UniqueIndex,  // Index, and distinct (within each fiber along `dim`, or over the whole tensor for
                // 1-d / list indices): writes through it (scatter, index_copy, index_put) are
                // deterministic
  Offsets,      // embedding_bag offsets: sorted, starting at 0, at most `bound`
  Sorted,       // sorted along the last dim (searchsorted, bucketize boundaries)
  Positive,     // > 0 (running_var, rstd, invstd)
  Unit,         // floats in [0, 1] (binary_cross_entropy input and target)
  SignedUnit,   // floats in [-1, 1] (grid_sampler grids)
  NonZero,      // integers other than 0 (integer division, remainder)
  Pivot,        // LAPACK pivots: integers in [1, bound] (lu_solve, lu_unpack, ldl_solve)
};

struct ArgRule {
  std::string arg;  // schema argument name ("index")
  ValueRule rule = ValueRule::Index;
  int64_t bound = 0;               // a fixed bound, used when size_of and bound_arg are empty
  std::string bound_arg;           // bound = this int argument's value (embedding_dense_backward's num_weights)
  std::string size_of;             // bound = the size of this tensor argument along `dim` ...
  int64_t dim = 0;                 // ... (negative counts from the end; clamped to the last dim) ...
  std::string dim_arg;             // ... or along the dim given by this int argument (None: all elements)
  bool numel = false;              // bound = size_of's number of elements (take, put)
  bool trailing_product = false;   // bound = product of size_of's sizes from `dim` to the end
  bool per_list_position = false;  // a tensor list: its k-th index tensor indexes size_of's dim k
                                   // (a bool mask consumes as many dims as it has)
  int unique_trailing = 0;         // UniqueIndex: distinct within each block of this many trailing
                                   // dims (max_unpool's per-plane indices)
};

struct Sample {
  std::string op;    // "add.Tensor"
  trace::Call call;  // argument spec in trace syntax
  ValueFamily family = ValueFamily::Normal;
  std::string label;    // short human description ("broadcast [4,1,8]+[3,8]")
  unsigned traits = 0;  // InputTrait bits the suite declares (broadcasting cannot be derived)
  // Value rules for this sample's arguments; empty: builtin_rules(op).
  std::vector<ArgRule> rules;
  // Storage offsets of the sample's tensors, in the order make_inputs draws them (argument order,
  // list elements in order); missing entries are 0. The trace format has no offset, so an offset
  // view exists only in built-in suites (the label says so).
  std::vector<int64_t> storage_offsets;
};

// The value rules kernelgate applies to an op's arguments when a sample names none ("gather.default":
// index in [0, self.size(dim))). Data suites rely on them: their files carry no values.
std::vector<ArgRule> builtin_rules(const std::string& op);
// Why an op is never sampled (its reference is random or returns uninitialised memory), or "".
std::string excluded_reason(const std::string& op);

// The default suite: for each op, the smallest built-in suite that has samples for it
// (auto_suite_order(): smoke, edge, opinfo, traces), so no op of a submission is left unjudged
// for want of a --suite. Every suite function below takes it like any other name.
inline constexpr const char* kAutoSuite = "auto";
const std::vector<std::string>& auto_suite_order();
// The suite `op` is judged on under `suite`: `suite` itself, or for "auto" the first of
// auto_suite_order() with samples for `op` ("" when none has any).
std::string suite_for_op(const std::string& suite, const std::string& op);

// Suite names this build has.
std::vector<std::string> suite_names();
// Samples of a suite for `op`. Throws std::runtime_error for an unknown suite.
std::vector<Sample> suite_samples(const std::string& suite, const std::string& op);
// Ops a suite covers (only overloads the linked libtorch has, none that excluded_reason names).
std::vector<std::string> suite_ops(const std::string& suite);
// Ops a suite's data or generators name that it leaves out, each with the reason (not in the
// linked libtorch, random or uninitialised reference, another namespace).
// Each sample a data suite leaves out is listed too, named "op at file:line": calls past the
// 2^26-element bound and calls no tensor can be built for (see unmaterialisable_reason).
std::vector<std::pair<std::string, std::string>> suite_left_out(const std::string& suite);
// The samples of `op` a data suite leaves out because no tensor can be built for them: the call's
// text and "file:line: why". The evaluator reports them as skipped, the sample's fault.
std::vector<std::pair<std::string, std::string>> suite_unbuildable_samples(const std::string& suite, const std::string& op);
// Whether a suite name is a path: a trace file or a directory of them (it has a '/' or ends in .txt).
bool suite_is_path(const std::string& suite);
// One line describing a suite (for `kernelgate ops`); "" for an unknown suite.
std::string suite_description(const std::string& suite);

// A sample no valid arguments exist for (an index into a dimension of size 0). It is skipped with
// this reason before any reference runs: on cuda:0 the reference would hit a device-side assert,
// which ends every later CUDA call of the process.
struct UnsatisfiableSample : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Why no tensor of this spec can be built ("" when one can): an unknown dtype, a negative size
// or stride, or sizes and strides whose element count, byte strides or spanned storage overflow
// int64 (`T([0, 4611686018427387904], f32)` is empty, yet its first stride in bytes is 2^64). It
// is the sample's fault: make_inputs throws UnsatisfiableSample with it, and the data suites
// leave such a sample out with its file and line.
std::string unmaterialisable_reason(const trace::TensorSpec& spec);

// Draws concrete arguments for `schema` from a sample. Deterministic in (seed, sample index).
// Positional args come from the spec, keyword args by name, the rest from schema defaults.
std::vector<c10::IValue> make_inputs(const c10::FunctionSchema& schema, const Sample& sample, std::mt19937_64& rng);
// Input traits of a sample, from its spec and concrete inputs.
unsigned input_traits(const Sample& sample, const std::vector<c10::IValue>& inputs);
std::vector<std::string> trait_list(unsigned traits);  // names of the set bits, in a fixed order
std::string trait_names(unsigned traits);              // the same, comma-separated

// ---- reference -----------------------------------------------------------------------------
// Calls the aten overload through the dispatcher. `args` are consumed (mutated by in-place ops);
// returns the op's returns.
std::vector<c10::IValue> call_reference(const c10::FunctionSchema& schema, std::vector<c10::IValue>& args);

// ---- comparison ----------------------------------------------------------------------------

struct Mismatch {
  // nan_mask, inf_mask, value_mismatch, dtype_mismatch, shape_mismatch or input_mutated
  policy::Category category = policy::Category::ValueMismatch;
  std::string where;   // "return 0", "argument 'self'"
  std::string detail;  // one line a human or a model can act on
  double max_abs_err = 0;
  double max_rel_err = 0;
  double max_ulp = 0;
  int64_t mismatches = 0;
  int64_t numel = 0;
  std::vector<int64_t> first_index;
  double expected = 0;
  double actual = 0;
};

// A contraction (mm, bmm, addmm, matmul, linear, einsum, convolution, ...): a sum of products.
// Where its reference and candidate are both non-finite, which of NaN, +inf, -inf comes out is
// implementation-defined and accepted (docs/verdicts.md). Takes any spelling of the overload
// ("mm.default", "aten::addmm_.default", "aten::conv2d").
bool is_contraction(const std::string& op);

// Compares one tensor (or nested value) with its reference. Empty result: equal under `tol`.
std::optional<Mismatch> compare_values(const c10::IValue& expected, const c10::IValue& actual, const policy::Policy& policy,
                                       const std::string& op, const std::string& where);
// Bitwise equality for "inputs unchanged" checks (NaN == NaN, -0.0 != 0.0).
std::optional<Mismatch> compare_exact(const c10::IValue& before, const c10::IValue& after, const std::string& where);

// The outputs an op leaves unspecified for these arguments, which judge_call does not judge:
// random-number state (philox_seed, philox_offset, rng_state, debug_attn_mask), a logsumexp
// not asked for, nll's total_weight under reduction='none', and the backward-only outputs of
// _embedding_bag_forward_only. `returns` by return position, `args` by argument position (the
// out= arguments of an out overload).
struct UnspecifiedOutputs {
  std::vector<bool> returns;
  std::vector<bool> args;
};
UnspecifiedOutputs unspecified_outputs(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs);

// Judges a whole call: returns, mutated arguments (in-place/out=) against the reference's,
// and unchanged inputs for every argument the schema does not let the op write. Unspecified
// outputs (above) are skipped.
std::vector<Mismatch> judge_call(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs_before,
                                 const std::vector<c10::IValue>& ref_returns, const std::vector<c10::IValue>& ref_args_after,
                                 const std::vector<c10::IValue>& cand_returns, const std::vector<c10::IValue>& cand_args_after,
                                 const policy::Policy& policy, const std::string& op);
// judge_call where the reference itself may be uncertain: `exact_returns` are the op's exact
// results (float64, rounded here to each return's dtype). Where the reference and the rounded
// exact result disagree (beyond tolerance, or in NaN/inf: a sum whose terms near the dtype's
// maximum cancel depends on its order), the candidate passes if it matches either; every other
// element is judged exactly as judge_call judges it. A written argument uses its return's.
std::vector<Mismatch> judge_call_either(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs_before,
                                        const std::vector<c10::IValue>& ref_returns, const std::vector<c10::IValue>& exact_returns,
                                        const std::vector<c10::IValue>& ref_args_after, const std::vector<c10::IValue>& cand_returns,
                                        const std::vector<c10::IValue>& cand_args_after, const policy::Policy& policy,
                                        const std::string& op);

// ---- evaluation ----------------------------------------------------------------------------

struct Failure {
  // a Mismatch category, aliasing, or compile_error, runtime_error, crash, timeout, memory_limit
  policy::Category category = policy::Category::RuntimeError;
  std::string sample;  // the input spec in trace syntax (paste into `kernelgate repro`)
  int index = -1;      // the sample's index in its suite (with the seed, it fixes the values)
  std::string label;
  std::string family;
  unsigned traits = 0;
  std::string message;
  std::optional<Mismatch> mismatch;
  // The honest mistake that explains a wrong answer, one line ("result has dtype f32, expected
  // f64", "error grows with K like f32 rounding (...)"); empty when none does.
  std::string diagnosis;
};

struct Violation {
  std::string rule;  // a rule id of the catalogue (policy::rule_id, catalogue.h)
  std::string evidence;
};

// One timed sample: the candidate and eager through the same loop in sandboxed runners.
struct Timing {
  std::string sample;
  int reps = 0;        // the candidate's timed calls (fewer than asked where they stopped on precision)
  int eager_reps = 0;  // eager's
  int value_sets = 1;  // distinct input values the warm-up and timed calls rotated through
  double candidate_median_s = 0;
  double candidate_iqr_s = 0;
  double eager_median_s = 0;
  double eager_iqr_s = 0;
  double floor_s = 0;  // roofline: the least time the bytes and flops can take here
  double speedup = 0;  // eager / candidate medians
};

// The device's measured peaks, for the roofline bound.
struct DevicePeaks {
  double bytes_per_s = 0;  // streaming write+read bandwidth, measured
  double flops_per_s = 0;  // an upper bound on arithmetic rate
};
DevicePeaks measure_peaks(names::Device device);
// measure_peaks once per process and device; later calls return the first measurement.
DevicePeaks process_peaks(names::Device device);
// Least time a call can take: bytes that must be written (the outputs) over peak bandwidth,
// and for the matmul family the flops over peak rate. 0 when nothing is known.
double roofline_floor_s(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs, const std::vector<c10::IValue>& returns,
                        const DevicePeaks& peaks);

struct OpResult {
  std::string op;
  std::string kind;                                  // cpu | cuda | nvrtc
  policy::Verdict verdict = policy::Verdict::Error;  // decided once the evaluation is over
  int total = 0;
  int passed = 0;
  // Samples the reference itself cannot run on this device/libtorch (e.g. f16 relu on CPU in
  // libtorch 1.13): not tests, listed with the reference's reason.
  std::vector<std::pair<std::string, std::string>> skipped;
  std::vector<Failure> failures;
  std::vector<Violation> violations;
  std::vector<Timing> timings;
  std::optional<double> speedup;  // geomean over the timed samples; never for a wrong op
  // Why timing stopped short without a failure of the kernel's (the eager reference's runner
  // died or could not start): the speedup is then null. "" otherwise.
  std::string timing_skipped;
  // --tolerance-sweep: atol=rtol value -> samples passing at it.
  std::map<std::string, int> sweep_passed;
  std::string suite;  // the suite its samples came from (under "auto", the one chosen for it)
  std::string error;  // for verdict "error": what went wrong (build error, no such op)
  std::string build_log;
  double build_s = 0;
  bool build_cache_hit = false;          // the artifact came from the build cache
  std::string build_cache_rejected;      // a cache entry failed its digest check and was rebuilt: why
  std::vector<std::string> build_notes;  // how the build ran (loader::BuildResult::notes)
  double eval_s = 0;
  // Where eval_s went (results.json's phase_seconds): the op's schema and suite samples looked
  // up, its build step (the build, or the wait for the build ahead, with the cache's look-up, and
  // the static rules on the artifact), waiting for the device lock (shared for judging, then
  // alone for timing), getting a runner with the artifact loaded, judging (the samples and the
  // trials, with the device shared), the timing with the device alone, and the runner's end (its
  // exit and record).
  double samples_s = 0;
  double build_step_s = 0;
  double device_wait_s = 0;
  double runner_start_s = 0;
  double judging_s = 0;
  double timing_s = 0;
  double runner_end_s = 0;
  // Where timing_s went (results.json's timing_seconds), summed over the timed samples: the probe
  // exchange that sizes the timed calls, drawing the value sets they rotate through (with their
  // references; a draw done ahead beside the trials costs nothing here), the candidate's timed
  // exchange (supervisor's wall clock) and the sum of its claimed call times, judging the timed
  // calls' outputs, and eager's timed exchange (its runner's start or load included) with the sum
  // of its call times. An exchange's wall clock less its calls' times is the per-call work of
  // refreshed inputs, flushed caches and the transfers.
  struct TimingSeconds {
    double probe = 0, draws = 0, candidate = 0, candidate_calls = 0, judge = 0, eager = 0, eager_calls = 0;
  } timing_parts;
  // Where judging_s went (results.json's judging_seconds): each sample's first judged call with
  // its draw and reference, then the trials: the identical repeat, the fresh-value rounds, the
  // same-address call, the enlarged trial (the scaled sample and the size ladder), and the size
  // probe with the diagnosis of a wrong call.
  struct JudgingSeconds {
    double samples = 0, repeat = 0, fresh = 0, same_address = 0, enlarged = 0, diagnosis = 0;
  } judging_parts;
  // The size ladder's top rung within `enlarged` (results.json's rung_seconds, present when the
  // rung was climbed): its inputs' draw (nothing when drawn ahead), the reference's time the gate
  // read, and the candidate's call there: the whole of it (the call region written, the runner's
  // reply awaited, the outputs decoded, remembered and compared) and the wait for the reply in it.
  struct RungSeconds {
    bool climbed = false;
    double draw = 0, reference = 0, call = 0, awaited = 0;
  } rung_parts;
  // Failure concentration: trait name -> failures with that trait.
  std::map<std::string, int> failure_traits;
  // How far the evaluation got, so a report can tell "nothing found" from "never looked".
  bool inspected = false;            // the static rules read the built artifact
  bool ran = false;                  // a runner loaded the kernel and was called
  bool device_work_watched = false;  // the cuda kind's host code ran on cuda:0 under the device work watch
  int trial_rounds = 0;              // fresh-input trial rounds completed (beyond each sample's first call)
  bool repeated = false;             // the identical repeats of a passing call ran
};

// A counting semaphore for builds: at most `n` at once in the process (or the batch) sharing it.
class BuildSlots {
 public:
  explicit BuildSlots(int n) : free_(n < 1 ? 1 : n) {}
  void acquire() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return free_ > 0; });
    --free_;
  }
  void release() {
    {
      std::lock_guard<std::mutex> l(mu_);
      ++free_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
};

// One device's runs (a device pool of a batch). Judging shares the device: many ops' correctness
// calls may run on it at once. Timing has it alone: an op's timed calls (and eager's) start only
// once every judging on the device has let go, and no judging starts while they run or wait, so
// timed calls never share the device with another op's calls. Usable with std::shared_lock and
// std::unique_lock; a waiting timer goes before judging that comes later (no starvation).
class DeviceLock {
 public:
  void lock_shared() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return !writer_ && writers_waiting_ == 0; });
    ++readers_;
  }
  void unlock_shared() {
    {
      std::lock_guard<std::mutex> l(mu_);
      --readers_;
    }
    cv_.notify_all();
  }
  void lock() {
    std::unique_lock<std::mutex> l(mu_);
    ++writers_waiting_;
    cv_.wait(l, [&] { return !writer_ && readers_ == 0; });
    --writers_waiting_;
    writer_ = true;
  }
  void unlock() {
    {
      std::lock_guard<std::mutex> l(mu_);
      writer_ = false;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int readers_ = 0;
  int writers_waiting_ = 0;
  bool writer_ = false;
};

// A runner slot for the eager reference (EvalOptions::eager_runner); opaque outside the harness.
struct EagerRunner;
// A slot whose runner starts on first use; finish_eager_runner ends it (a batch, at the end).
std::shared_ptr<EagerRunner> make_eager_runner();
void finish_eager_runner(EagerRunner& slot);

// Progress of one evaluation (EvalOptions::on_progress).
struct EvalProgress {
  size_t ops_done = 0, ops_total = 0;
  std::string op;            // the op being judged ("" once every op is decided)
  std::string phase;         // "build", "samples", "timing" or "decided"
  size_t samples_done = 0;   // of the op's samples, judged so far
  size_t samples_total = 0;  // the op's samples (0 before they are known)
};

struct EvalOptions {
  std::string submission;
  std::string suite = kAutoSuite;
  std::vector<std::string> ops;  // empty: every op folder
  names::Device device = names::Device::Cpu;
  uint64_t seed = 0;
  bool seed_given = false;
  std::string out_dir = "kernelgate-out";
  std::string runner_path;  // empty: loader::default_runner_path()
  bool timing = true;
  bool verbose = false;
  // Self-check: no submission; every op of the suite is run by the runner calling the aten
  // overload itself, through the same sandbox, protocol and comparison. Must pass everything.
  bool self_check = false;
  bool tolerance_sweep = false;
  int timed_samples = 3;  // the largest passing samples are timed
  // Reproduce one sample: only this op and this sample, values drawn as for sample `index`.
  struct Repro {
    std::string op;
    Sample sample;
    int index = 0;
  };
  std::optional<Repro> repro;
  // Builds of the submission's ops run ahead of its runs, up to this many at once (their artifacts
  // land in the build cache; the op's own build step then finds them there), overlapped with the
  // runs. 1: one op after the other, build then run. A batch shares `build_slots` between its
  // submissions so that --jobs bounds the whole process.
  int jobs = 1;
  std::shared_ptr<BuildSlots> build_slots;
  // The device's lock: shared from an op's runner start to its finish (builds never hold it),
  // exclusive around its timing, so that timed calls never overlap another op's calls on the
  // device. Null: the evaluation has its device to itself.
  DeviceLock* device_lock = nullptr;
  // The device pool the runs use: on cuda the host GPU index every runner is given (-1: the
  // default GPU); on the CPU a simulated pool, recorded only.
  int device_pool = -1;
  // The eager reference's runner (no submission code ever runs in it), shared by the evaluations
  // of one device pool so that a batch starts it once per pool rather than once per submission;
  // used under `device_lock`. Null: the evaluation starts its own and finishes it at the end.
  std::shared_ptr<EagerRunner> eager_runner;
  // Runners started ahead (loader/runner_pool.h), for this device pool: every runner the
  // evaluation needs (each op's, a fresh one after a crash, eager's) is taken from it when its
  // options match the evaluation's. Null: the evaluation keeps a pool of its own with one runner
  // ready, started while it builds. Every runner is still new and used for one op only.
  std::shared_ptr<loader::RunnerPool> runner_pool;
  // The given pool serves this evaluation alone (a daemon worker's, started before its request):
  // the evaluation bounds its starts ahead to the runners it needs, as it does its own pool's.
  bool runner_pool_exclusive = false;
  // No pool at all: each runner is started when it is needed (the behaviour before pools, kept
  // for measuring what the pool saves).
  bool no_runner_pool = false;
  // Called with each op's result the moment its verdict is decided (a batch's journal), on the
  // evaluating thread, before the next op starts.
  std::function<void(const OpResult&)> on_op_decided;
  // Asked before each op, and inside one between its samples, before its trials and before its
  // timing: a non-empty answer (a service's cancel or task timeout) stops the evaluation there,
  // and every op not yet judged, the one stopped inside included, is an error op saying
  // "not judged: " + answer. A call under way finishes first (bounded by the policy's call limit).
  std::function<std::string()> stop_reason;
  // Where the evaluation is (a terminal's progress line): called on the evaluating thread when an
  // op starts, after each of its samples, when its timing starts, and when it is decided.
  std::function<void(const EvalProgress&)> on_progress;
};

// A runner pool for evaluations with `options` and `policy` (EvalOptions::runner_pool; a batch
// keeps one per device pool): `ready` runners kept started, each with a folder of its own under
// `staging_root` (created); at most `max_ahead` started ahead in all (0: no bound).
std::shared_ptr<loader::RunnerPool> make_runner_pool(const EvalOptions& options, const policy::Policy& policy,
                                                     const std::string& staging_root, size_t ready, size_t max_ahead = 0);

// Whether `pool`'s runners are the ones an evaluation with `options` and `policy` would start (the
// same runner, profile, GPU and limits): it takes runners from a pool only then.
bool runner_pool_serves(const loader::RunnerPool& pool, const EvalOptions& options, const policy::Policy& policy);

// Sets up in this process what an evaluation on `device` would set up at its start (the device's
// peaks; on cuda its context), so that a process prepared ahead of its request (a daemon's worker)
// does not pay for it then.
void prepare_process(names::Device device);

// kernelgate's version, as results.json gives it.
const char* version();
// An op's verdict once it is judged: `error` when it has one, `rejected` when a violation's rule
// rejects under `policy`, `fail` on a failure or a sample not passed, else `pass`; failure_traits
// counted; a verdict other than pass keeps no speedup.
void decide_verdict(OpResult& result, const policy::Policy& policy);
// The sandboxed runner a judged call runs in, as `evaluate` starts it: kg-runner (options or the
// default), the run profile of options.device, the policy's limits; `artifact`'s folder bound
// read-only ("" binds none: a runner with RunnerOptions::staging_root set, or the aten op itself).
loader::RunnerOptions runner_options(const EvalOptions& options, const policy::Policy& policy, const std::string& artifact);
// How `evaluate` builds a submission's code under `policy` (compile time and memory, the largest
// artifact kept in the cache): builds into `work_dir` when the cache is off, diagnostics relative
// to `submission_root`. KernelBench's load_inline extensions, train-check and grad-check build
// the same way.
loader::BuildOptions build_options(const policy::Policy& policy, const std::string& work_dir, const std::string& submission_root);

// B5: of the elements where `cand` differs from `ref`, the fraction that hold kg-runner's
// allocation poison (c10's junk fill, 0x7fedbeef words, at any byte phase): memory the call
// allocated and never wrote. -1 when the shapes do not line up or nothing differs.
double poison_fraction(const std::vector<c10::IValue>& cand, const std::vector<c10::IValue>& ref);

// ---- evidence --------------------------------------------------------------------------------
// Records a violation of `rule` in `result`; one of each rule per op is evidence enough.
void violation(OpResult& result, policy::Rule rule, const std::string& evidence);
// A sandbox_violation when the runner's record says a syscall was denied.
void sandbox_violation(OpResult& result, const sandbox::Record& record);
// What the runner saw around one call, as violations (the runner reports; the policy's tables
// decide): PyTorch compute operators the kernel dispatched (fallback_to_torch; `op` is the judged
// overload, whose own operator is never allowed), the observations of policy::observation_rules()
// (`returns_only_views`: a view op, which needs no device work), files the sandbox refused.
// `sample` starts each evidence line.
void record_runner_evidence(OpResult& result, const loader::CallOutcome& out, const std::string& op, bool returns_only_views,
                            const std::string& sample);

struct Report {
  std::string version;
  std::string torch_version;
  std::string device;  // names::device_name of the evaluation's device
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

// Cuda when the linked libtorch has CUDA and a GPU is visible, else Cpu (for --device auto).
names::Device auto_device();

// Evaluates every op of a submission. Throws std::runtime_error only for configuration errors
// (unreadable submission, unknown suite, device not available); every per-op problem is in the report.
Report evaluate(const EvalOptions& options, const policy::Policy& policy);

// The atol=rtol values of --tolerance-sweep.
const std::vector<double>& sweep_tolerances();

// results.json text.
std::string report_json(const Report& report);
// The terminal table.
std::string report_table(const Report& report);
// Short, precise text about every failing op, to paste into a kernel-writing model's next prompt.
std::string report_feedback(const Report& report);
// Exit status for `kernelgate eval`: 0 when every op passed, else 1.
int report_exit_code(const Report& report);

// ---- audit report (`kernelgate audit`) -------------------------------------------------------
// Per rule of the catalogue (catalogue.h): what kernelgate checks for it, its action in `policy`, and
// per op what was found (the evidence), "nothing found", or why the check was not reached.
// `date` is written as given (the command passes the UTC time of the run).
std::string audit_markdown(const Report& report, const policy::Policy& policy, const std::string& date);
std::string audit_json(const Report& report, const policy::Policy& policy, const std::string& date);

}  // namespace kg::harness

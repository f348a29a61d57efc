// One op's evaluation, split by concern (private to harness/): the state its steps share, and the
// steps themselves. evaluate.cc orchestrates them; judge.cc compares a call's outputs with the
// reference and classifies failures; evidence.cc turns what was seen (runner evidence, suspicious
// outputs) into rule violations; trials.cc runs the fresh-input rounds and identical repeats;
// timing.cc times the passing samples against eager and bounds the claimed times.
#pragma once

#include "draws_ahead.h"
#include "kernelgate/harness.h"
#include "kernelgate/loader.h"

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kg::harness::evaluation {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Per-sample generator: the run's seed, the op and the sample index, mixed.
std::mt19937_64 sample_rng(uint64_t seed, const std::string& op, size_t index);

// Tensor elements over all inputs.
int64_t input_numel(const std::vector<c10::IValue>& inputs);

// A number in 4 significant digits, for evidence and sweep keys.
std::string fmt(double v);

// The sandbox limits and binds of a runner for `artifact`'s folder ("": none) under `options` and `policy`.
loader::RunnerOptions runner_options(const EvalOptions& options, const policy::Policy& policy, const std::string& artifact);

// State shared by all ops of one evaluation.
struct Run {
  const EvalOptions& options;
  const policy::Policy& policy;
  uint64_t seed;
  std::string work_dir;
  DevicePeaks peaks;
  std::shared_ptr<EagerRunner> eager_slot;   // a runner with no submission code: eager timing
  std::shared_ptr<loader::RunnerPool> pool;  // runners started ahead (null: each started when needed)
  std::unique_ptr<loader::RunnerClient>& eager() const;
  // The op's build when it ran ahead of the runs (waits for it); nullopt: build it now.
  std::function<std::optional<loader::BuildResult>(const std::string& op)> built_ahead;

  size_t ops_done = 0, ops_total = 0;  // for EvalOptions::on_progress
  // Tells EvalOptions::on_progress (when set) where the evaluation is.
  void progress(const std::string& op, const char* phase, size_t samples_done = 0, size_t samples_total = 0) const;

  loader::RunnerOptions runner_options(const std::string& artifact) const;
  // How the op folders of this evaluation are built (the build step and the builds run ahead).
  loader::BuildOptions build_options() const;
  loader::Device device() const { return options.device; }
  // A new runner with nothing loaded yet: from the pool when it serves this evaluation (then
  // `request`'s artifact is staged into the runner's own folder and the request names the copy),
  // else started now for `request`'s artifact, with its device set up on cuda. Nothing, or the error.
  std::optional<loader::LoadError> obtain(std::unique_ptr<loader::RunnerClient>* runner, loader::LoadRequest* request) const;
  // obtain, then `request` loaded into the runner (an empty artifact: the aten overload itself).
  std::optional<loader::LoadError> start(std::unique_ptr<loader::RunnerClient>* runner, const loader::LoadRequest& request) const;
  loader::LoadRequest eager_request(const std::string& op) const;
};

// One sample with everything needed to judge and time it again.
struct Judged {
  size_t index = 0;
  std::vector<c10::IValue> inputs, ref_returns;
  // The arguments after the reference's call; on cuda:0 only those the op writes are its own
  // copies, the others share the inputs' tensors (the judge reads only the written ones).
  std::vector<c10::IValue> ref_args;
  std::vector<c10::IValue> returns;  // the candidate's, when it passed
  std::vector<int32_t> ref_alias;    // which argument each reference return shares storage with
  double call_s = 0;
};

// A wrong call, kept to be looked at again: its sample, and where in the trials it happened.
struct WrongCall : Judged {
  Sample sample;
  std::string context;
};

// What the evaluation has seen of the candidate's calls, kept for the rules that need more than
// one call to decide.
struct CallHistory {
  struct Remembered {
    std::string inputs_key, what;
    std::vector<c10::IValue> returns;
    std::optional<uint64_t> inputs_fingerprint;  // value_fingerprint of the call's inputs, where known
  };
  std::vector<Remembered> recent;                                // recent candidate outputs, the current call's last
  std::optional<WrongCall> first_wrong;                          // diagnosed after the trials
  std::optional<WrongCall> size_probe_subject;                   // smallest unexplained wrong call above every passing size
  std::string size_evidence;                                     // what the size probe showed (shape_specialisation)
  int64_t max_pass_numel = 0;                                    // largest passing sample (input elements)
  int64_t min_fail_numel = std::numeric_limits<int64_t>::max();  // smallest wrong one
  int repeats_left = 2;                                          // repeats of unexplained wrong calls (nondeterminism)
};

// The op under evaluation: what every step reads (the run, the folder, the schema, the load
// request), the runner its calls go to, what has been seen of them, and the result being built.
struct OpState {
  OpState(Run& run, const loader::OpFolder& folder);
  ~OpState();  // removes a build too large to cache
  OpState(const OpState&) = delete;
  OpState& operator=(const OpState&) = delete;

  Run& run;
  const policy::Policy& policy;
  const loader::OpFolder& folder;
  const c10::FunctionSchema* schema = nullptr;
  loader::BuildResult uncached;                          // only its uncached_dir: a build too large to cache, removed with this
  std::vector<loader::BuildResult> extensions_uncached;  // a python source's load_inline builds, the same
  loader::LoadRequest request;
  std::unique_ptr<loader::RunnerClient> runner;
  CallHistory history;
  OpResult result;
  std::string stopped;  // why the evaluation stopped inside this op (EvalOptions::stop_reason), "" while it goes on
  // The trials' large draws, made ahead while the samples are judged (last: stopped and joined first).
  std::unique_ptr<DrawsAhead> draws_ahead;
  // The timing's rotation sets, drawn during the trials and finished before the timed calls.
  std::unique_ptr<DrawsAhead> timing_draws_ahead;

  bool runner_alive() const { return runner && runner->alive(); }
  // Asks EvalOptions::stop_reason (between samples, before the trials and before the timing):
  // true, with `stopped` set, when the op must stop here.
  bool must_stop();
  // The index that seeds sample i's values (the repro's own index under --repro).
  size_t rng_index(size_t i) const;
  loader::CallOptions call_options(const std::vector<c10::IValue>& ref_returns, int warmup = 0, int reps = 0) const;
};

// ---- load_inline in a python op source (inline_extensions.cc) ------------------------------

// A python op whose source names load_inline: its calls listed by a runner of their own (under
// the device lock's shared side), each built and inspected, and op.request pointed at a copy of
// the source with the libraries beside it. False (recorded) when one does not build or the list
// cannot be read; true with nothing changed for any other op.
bool build_python_op_extensions(OpState& op, const loader::BuildOptions& bo);

// ---- judge (judge.cc) ----------------------------------------------------------------------

// A failure of sample `s` (its index in the suite, its drawn inputs).
Failure sample_failure(const Sample& s, size_t index, const std::vector<c10::IValue>& inputs, policy::Category category,
                       const std::string& message);
// Maps a dead runner's record to a failure category.
policy::Category category_for_death(const loader::CallOutcome& out);
// The reference on the evaluation device, brought back to the CPU for judging.
void reference(const OpState& op, Judged& j);
// Sample `s`'s values drawn from the run's seed at `seed_index`: taken from `ahead` when it drew
// them, else drawn here (the same values either way).
std::vector<c10::IValue> draw_inputs(const OpState& op, DrawsAhead* ahead, const Sample& s, size_t seed_index);
// Fresh values for sample `s` (drawn from the run's seed at `seed_index`) with their reference;
// nothing when they cannot be drawn or the reference rejects them.
std::optional<Judged> draw_judged(const OpState& op, const Sample& s, size_t index, size_t seed_index);
// judge_call for this op under its policy: the mismatches of a call's returns and arguments.
std::vector<Mismatch> judge(const OpState& op, const Judged& j, const std::vector<c10::IValue>& returns,
                            const std::vector<c10::IValue>& args_after);
// Runs one sample of the suite on the op's runner (restarted if it died); returns it when it passed.
std::optional<Judged> judge_sample(OpState& op, const Sample& s, size_t i);

// ---- evidence (evidence.cc) ----------------------------------------------------------------

// violation() and sandbox_violation() are public (harness.h).
// What the runner saw around a call, turned into rules (the runner reports; we decide).
void runner_evidence(OpState& op, const loader::CallOutcome& out, const std::string& sample);
// Keeps the candidate's recent outputs, to recognise replayed and never-written outputs later.
// `inputs_key` names the input values (sample index and trial round): outputs of calls on the
// same values are never evidence of replay.
void remember(OpState& op, const Sample& s, const std::string& inputs_key, const std::vector<c10::IValue>& returns);
// The same, the call named by the values of its inputs (value_fingerprint): preferred, since two
// calls on equal values (samples differing only in a dtype= argument, constant edge values) are
// then never taken for a replay.
void remember(OpState& op, const Sample& s, const std::vector<c10::IValue>& inputs, const std::vector<c10::IValue>& returns);
// A wrong call: its failure (with the diagnosis when an honest mistake explains it), and the
// rules that explain how it is wrong. True when a rule or an honest mistake explained it (then no
// rule that needs an unexplained wrong call, stateful or nondeterministic, is looked for).
bool record_wrong(OpState& op, const Sample& s, size_t i, const Judged& j, const loader::CallOutcome& out, const Mismatch& m,
                  const std::string& context);
// Right on every small sample and wrong on every larger one (B14) is not enough by itself: the
// rule fires when the size probe (trials.cc) showed a size-only branch (history.size_evidence).
void shape_specialisation_by_size(OpState& op);

// ---- diagnosis (diagnosis.cc) --------------------------------------------------------------

// The op on `inputs` computed in float64 on the CPU (floating and complex tensors upcast, the
// returns kept in float64): the truth an honest rounding is measured against. Nothing when the
// op or its inputs do not allow it (integer-only ops, an overload that rejects float64).
std::optional<std::vector<c10::IValue>> reference_f64(const OpState& op, const std::vector<c10::IValue>& inputs);
// Context-aware tolerance (policy [context_tolerance]): the largest errors of the candidate and of
// eager against reference_f64, the error allowed, and the mismatch (one, value_mismatch) when the
// candidate's is beyond it. Nothing when the judgement does not apply and atol/rtol decides: a
// factor of 0, a mismatch other than values, integer results, no float64 result, or an eager
// whose own error is not finite.
struct ContextJudgement {
  double candidate_error = 0, eager_error = 0, allowed = 0;
  std::vector<Mismatch> mismatches;
};
std::optional<ContextJudgement> judge_in_context(const OpState& op, const Judged& j, const std::vector<c10::IValue>& returns,
                                                 const std::vector<Mismatch>& by_tolerance, double factor);
// The factor --tolerance-sweep judges the context-aware tolerance at when the policy has it off.
constexpr double kSweepContextFactor = 8;
// A one-line diagnosis when an honest mistake explains a wrong call: a wrong dtype ("result has
// dtype f32, expected f64"), a missing type promotion, ordinary rounding ("error grows with K like
// f32 rounding"), a uniform relative error. Nothing when none does. No cheat rule that reads the
// outputs (trivial, replayed, shape) fires on an explained call.
std::optional<std::string> honest_explanation(const OpState& op, const Judged& j, const std::vector<c10::IValue>& cand_returns,
                                              const Mismatch& m);

// ---- same-address trial (address_trial.cc) -------------------------------------------------

// A passing sample called again on fresh values written into the very buffers (every input at
// its old address at once): an output cache keyed on input addresses replays (B7).
void same_address_trial(OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& passed);

// ---- trials (trials.cc) --------------------------------------------------------------------

// A judged call no rule explained, repeated right away (the first two per op).
void repeat_unexplained(OpState& op, const Sample& s, const Judged& j, const loader::CallOutcome& first);
// Correctness trials beyond the suite's one call per sample (docs/threats.md B7, B8, B9, B14).
void run_trials(OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& passed);
// The draws the enlarged trial makes when every sample passes (the largest one scaled up), for
// DrawsAhead to make while the samples are judged; none without trials.
std::vector<DrawsAhead::Want> enlarged_trial_draws(const OpState& op, const std::vector<Sample>& all);
// One judged call without allocation poisoning on the largest timed sample (CPU only).
void unpoisoned_check(OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& timed);

// ---- timing (timing.cc) --------------------------------------------------------------------

// Times the largest passing samples: candidate and eager through the same runner loop.
void time_samples(OpState& op, const std::vector<Sample>& all, std::vector<Judged>& passed);
// The value sets time_samples draws for its rotation when the probe asks for the most calls
// (within 64 MiB in all), for DrawsAhead to make during the trials; none without trials.
std::vector<DrawsAhead::Want> rotation_draws(const OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& passed);

}  // namespace kg::harness::evaluation

// Timing: the largest passing samples, candidate and eager through the same runner loop, every
// claimed time bounded by the device's roofline and the supervisor's own clock, and the timed
// calls' outputs judged too.
#include "cheats.h"
#include "op_evaluation.h"
#include "util.h"

#include "kernelgate/protocol.h"
#include "kernelgate/wire.h"

#include <algorithm>
#include <cmath>

namespace kg::harness::evaluation {
namespace {

constexpr size_t kRotationSeed = 400000;  // added to the sample's seed index, and the set's number

// The candidate's timed calls did not complete. A runner that died names its signal or limit
// and the phase; whoever killed it, the op is not timed and not passed (the supervisor cannot
// tell an outside kill from the kernel's own).
void timed_calls_failed(OpState& op, const Sample& s, const Judged& j, const loader::CallOutcome& out) {
  policy::Category category = out.kind == loader::CallOutcome::Kind::OpError ? policy::Category::RuntimeError : category_for_death(out);
  std::string msg = "the timed calls failed: " + out.message;
  if (!out.record.stderr_text.empty()) msg += " stderr: " + out.record.stderr_text.substr(0, 1000);
  op.result.failures.push_back(sample_failure(s, j.index, j.inputs, category, msg));
  sandbox_violation(op.result, out.record);
}

// The timed call count: enough calls for the policy's min_seconds of measured time, from a short
// probe (1 warm-up, 3 timed calls), within [min_reps, max_reps], and no more than about
// 20 x min_seconds of the supervisor's wall clock per timed exchange (inputs are refreshed and
// caches flushed before every call, which can cost more than the call).
// -1 when the probe lost the runner (recorded as the timed calls' failure).
int timed_reps(OpState& op, const Sample& s, const Judged& j, size_t n_returns, const std::string& sample) {
  const policy::Policy& pol = op.policy;
  int reps = pol.timing_min_reps;
  const int probe_reps = 3;
  loader::CallOutcome probe =
      op.runner->call(j.inputs, n_returns, pol.run_call_time_s * (probe_reps + 2), op.call_options(j.ref_returns, 1, probe_reps));
  runner_evidence(op, probe, sample);
  if (probe.kind != loader::CallOutcome::Kind::Ok && !op.runner->alive()) {
    timed_calls_failed(op, s, j, probe);
    return -1;
  }
  if (probe.kind != loader::CallOutcome::Kind::Ok || probe.times_s.empty()) return reps;
  const double median = quantile(probe.times_s, 0.5);
  const double wall_per_call = probe.supervisor_wall_s / (probe_reps + 1);
  if (median > 0) reps = static_cast<int>(std::min(1e7, std::ceil(pol.timing_min_seconds / median)));
  if (wall_per_call > 0) reps = std::min(reps, static_cast<int>(std::min(1e7, 20 * pol.timing_min_seconds / wall_per_call)));
  // One exchange carries at most kMaxTimedReps times (the audit profile's max_reps is higher).
  return std::min(std::clamp(reps, pol.timing_min_reps, pol.timing_max_reps), protocol::kMaxTimedReps);
}

int fresh_reps(const policy::Policy& pol, int reps, int value_sets) {
  return std::min(reps, std::max(pol.timing_min_reps, value_sets - pol.timing_warmup));
}

// Value sets the warm-up and timed calls rotate through besides the judged one: fresh draws of
// the same sample (same shapes and layouts), each with its reference. Every call sees values no
// call before it saw, so a kernel that memoises outputs by content (B7) gains nothing, and the
// outputs of every set's last call are judged. Bounded by the policy's timing.rotation_mib over
// all sets (the judged one included).
// How many value sets (the judged one included) `calls` calls of `j`'s sample rotate through.
size_t rotation_set_count(const OpState& op, const Judged& j, int calls) {
  const size_t budget = static_cast<size_t>(op.policy.timing_rotation_mib) << 20;
  const size_t bytes = std::max<size_t>(1, wire::encoded_size(j.inputs));
  return std::min<size_t>({protocol::kMaxInputSets, static_cast<size_t>(std::max(calls, 1)), budget / bytes});
}

std::vector<Judged> rotation_sets(const OpState& op, const Sample& s, const Judged& j, int calls) {
  const size_t want = rotation_set_count(op, j, calls);
  std::vector<Judged> out;
  for (size_t k = 1; k < want; ++k) {
    std::optional<Judged> x = draw_judged(op, s, j.index, op.rng_index(j.index) + kRotationSeed + k);
    if (!x) break;  // the sets drawn so far stay
    out.push_back(std::move(*x));
  }
  return out;
}

// The outputs of the timed calls are judged too: a kernel must not be right only when untimed.
// False (recorded) when the judged set or a rotated one is wrong.
bool timed_outputs_right(OpState& op, const Sample& s, const Judged& j, const std::vector<Judged>& rotation,
                         const loader::CallOutcome& cand) {
  auto mism = judge(op, j, cand.returns, cand.args_after);
  std::optional<size_t> wrong_set;  // the rotated set that was wrong, when the judged one was right
  for (size_t k = 0; mism.empty() && k < rotation.size() && k < cand.more.size(); ++k) {
    mism = judge(op, rotation[k], cand.more[k].returns, cand.more[k].args_after);
    if (!mism.empty()) wrong_set = k;
  }
  if (mism.empty()) return true;
  // Right when judged, wrong when timed: the kernel tells evaluation from benchmarking.
  loader::CallOutcome shown = cand;
  if (wrong_set) {
    shown.returns = cand.more[*wrong_set].returns;
    shown.args_after = cand.more[*wrong_set].args_after;
  }
  record_wrong(op, s, j.index, wrong_set ? rotation[*wrong_set] : j, shown, mism.front(), "wrong during the timed calls: ");
  violation(op.result, policy::Rule::ShapeSpecialisation,
            trace::format_call(s.call) + " is right on its judged call and wrong during the timed calls: " + mism.front().detail);
  return false;
}

// The runner reports, the supervisor bounds: claimed times must fit in the supervisor's own clock
// around the exchange. False (a protocol_violation) when they do not.
bool claimed_times_fit(OpState& op, const loader::CallOutcome& cand) {
  double claimed = 0;
  for (double t : cand.times_s) claimed += t;
  if (claimed <= cand.supervisor_wall_s) return true;
  op.result.violations.push_back({policy::rule_id(policy::Rule::ProtocolViolation),
                                  "runner claims " + fmt(claimed) + " s of timed calls in an exchange the supervisor measured at " +
                                      fmt(cand.supervisor_wall_s) + " s"});
  return false;
}

// Eager through the same loop on the same inputs, in kernelgate's own runner. When it fails, the
// op keeps its verdict and has no speedup, with the reason (nothing returned).
std::optional<loader::CallOutcome> time_eager(OpState& op, const Sample& s, const Judged& j, loader::CallOptions co, double budget) {
  Run& run = op.run;
  const std::string untimed = "timing stopped at " + trace::format_call(s.call) + ": the eager reference's runner ";
  std::unique_ptr<loader::RunnerClient>& runner = run.eager();
  if (!runner || !runner->alive()) {
    if (auto e = run.start(&runner, run.eager_request(op.folder.op))) {
      op.result.timing_skipped = untimed + "could not start: " + e->message;
      return std::nullopt;
    }
  } else if (auto e = runner->load(run.eager_request(op.folder.op))) {
    op.result.timing_skipped = untimed + "could not load the aten overload: " + e->message;
    return std::nullopt;
  }
  co.output_like.clear();
  loader::CallOutcome eager = runner->call(j.inputs, op.schema->returns().size(), budget * 4, co);
  if (eager.kind != loader::CallOutcome::Kind::Ok || eager.times_s.empty()) {
    op.result.timing_skipped = untimed + "failed: " + eager.message;
    return std::nullopt;
  }
  return eager;
}

// Times one sample; nothing when timing stops here (recorded: a failure, a violation or why).
std::optional<Timing> time_sample(OpState& op, const Sample& s, const Judged& j) {
  const policy::Policy& pol = op.policy;
  if (!op.runner_alive()) {
    op.result.timing_skipped = "the kernel's runner was not running when timing began";
    return std::nullopt;
  }
  const std::string call = trace::format_call(s.call);
  const size_t n_returns = op.schema->returns().size();
  OpResult::TimingSeconds& parts = op.result.timing_parts;
  Clock::time_point t0 = Clock::now();
  int reps = timed_reps(op, s, j, n_returns, call);
  parts.probe += seconds_since(t0);
  if (reps < 0) return std::nullopt;
  t0 = Clock::now();
  const std::vector<Judged> rotation = rotation_sets(op, s, j, reps + pol.timing_warmup);
  parts.draws += seconds_since(t0);
  // Only as many timed calls as there are fresh sets after the warm-up, but never fewer than
  // min_reps: only inputs over rotation_mib / (warmup + min_reps) revisit values.
  reps = fresh_reps(pol, reps, 1 + static_cast<int>(rotation.size()));
  const double budget = pol.run_call_time_s * (reps + pol.timing_warmup + 1);
  loader::CallOptions co = op.call_options(j.ref_returns, pol.timing_warmup, reps);
  if (pol.timing_stop_rel_error > 0) {
    co.stop_rel_error = pol.timing_stop_rel_error;
    co.stop_min_reps = std::min(reps, pol.timing_min_reps);
  }
  for (const Judged& x : rotation) co.more_inputs.push_back(x.inputs);
  t0 = Clock::now();
  loader::CallOutcome cand = op.runner->call(j.inputs, n_returns, budget, co);
  parts.candidate += seconds_since(t0);
  for (double c : cand.times_s) parts.candidate_calls += c;
  runner_evidence(op, cand, call);
  if (cand.kind != loader::CallOutcome::Kind::Ok || cand.times_s.empty()) {
    timed_calls_failed(op, s, j, cand);
    return std::nullopt;
  }
  // A median under the roofline floor is impossible whatever the outputs hold (a kernel that
  // hands its work to another thread may also leave them unfinished): checked first.
  const double floor_s = roofline_floor_s(*op.schema, j.inputs, j.ref_returns, op.run.peaks);
  const double median_s = quantile(cand.times_s, 0.5);
  if (median_s < floor_s)
    violation(op.result, policy::Rule::ImpossibleSpeed,
              "median " + fmt(median_s) + " s over " + std::to_string(cand.times_s.size()) + " timed calls on " + call +
                  " is under the roofline floor of " + fmt(floor_s) + " s");
  t0 = Clock::now();
  const bool right = timed_outputs_right(op, s, j, rotation, cand);
  parts.judge += seconds_since(t0);
  if (!right || !claimed_times_fit(op, cand)) return std::nullopt;
  t0 = Clock::now();
  std::optional<loader::CallOutcome> eager = time_eager(op, s, j, co, budget);
  parts.eager += seconds_since(t0);
  if (!eager) return std::nullopt;
  for (double c : eager->times_s) parts.eager_calls += c;
  if (auto e = escaped_work_evidence(cand.idle_wait_s, eager->idle_wait_s, cand.times_s))
    violation(op.result, policy::Rule::AsyncEscape, call + ": " + *e);
  Timing t;
  t.sample = call;
  t.reps = static_cast<int>(cand.times_s.size());
  t.eager_reps = static_cast<int>(eager->times_s.size());
  t.value_sets = static_cast<int>(1 + cand.more.size());  // the sets its calls reached
  t.candidate_median_s = median_s;
  t.candidate_iqr_s = quantile(cand.times_s, 0.75) - quantile(cand.times_s, 0.25);
  t.eager_median_s = quantile(eager->times_s, 0.5);
  t.eager_iqr_s = quantile(eager->times_s, 0.75) - quantile(eager->times_s, 0.25);
  t.floor_s = floor_s;
  t.speedup = t.candidate_median_s > 0 ? t.eager_median_s / t.candidate_median_s : 0;
  return t;
}

// The positions in `passed` of the samples timed, in the order they are timed: the largest first.
std::vector<size_t> timed_order(const OpState& op, const std::vector<Judged>& passed) {
  std::vector<std::pair<int64_t, size_t>> by_size;
  for (size_t k = 0; k < passed.size(); ++k) by_size.emplace_back(input_numel(passed[k].inputs), k);
  std::sort(by_size.begin(), by_size.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const int timed_samples = op.run.options.timed_samples;
  if (by_size.size() > static_cast<size_t>(std::max(1, timed_samples))) by_size.resize(static_cast<size_t>(timed_samples));
  std::vector<size_t> out;
  for (const auto& [numel, k] : by_size) out.push_back(k);
  return out;
}

}  // namespace

std::vector<DrawsAhead::Want> rotation_draws(const OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& passed) {
  std::vector<DrawsAhead::Want> wants;
  // Only where the trials leave time to draw them, and not for one sample's repro.
  if (op.policy.correctness_trials < 2 || op.run.options.repro || !draws_ahead_enabled()) return wants;
  const policy::Policy& pol = op.policy;
  // rotation_sets' sets when the probe asks for the most calls, within kDrawsAheadMib in all.
  constexpr size_t kDrawsAheadMib = 64;
  const size_t ahead_budget = std::min<size_t>(pol.timing_rotation_mib, kDrawsAheadMib) << 20;
  const int most_calls = std::min(pol.timing_max_reps, static_cast<int>(protocol::kMaxTimedReps)) + pol.timing_warmup;
  size_t ahead_bytes = 0;
  for (size_t k : timed_order(op, passed)) {
    const Judged& j = passed[k];
    const size_t bytes = std::max<size_t>(1, wire::encoded_size(j.inputs));
    const size_t sets = rotation_set_count(op, j, most_calls);
    for (size_t set = 1; set < sets && ahead_bytes + bytes <= ahead_budget; ++set, ahead_bytes += bytes) {
      const size_t seed_index = op.rng_index(j.index) + kRotationSeed + set;
      wants.push_back({seed_index, all[j.index], sample_rng(op.run.seed, op.folder.op, seed_index)});
    }
  }
  return wants;
}

void time_samples(OpState& op, const std::vector<Sample>& all, std::vector<Judged>& passed) {
  std::vector<Judged> largest_first;
  for (size_t k : timed_order(op, passed)) largest_first.push_back(std::move(passed[k]));
  passed = std::move(largest_first);
  double log_sum = 0;
  int timed = 0;
  for (const Judged& j : passed) {
    std::optional<Timing> t = time_sample(op, all[j.index], j);
    if (!t) return;  // stopped short: no speedup
    op.result.timings.push_back(*t);
    if (t->speedup > 0) {
      log_sum += std::log(t->speedup);
      timed++;
    }
  }
  if (timed > 0) op.result.speedup = std::exp(log_sum / timed);
}

}  // namespace kg::harness::evaluation

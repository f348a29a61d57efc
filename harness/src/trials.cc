// Correctness trials beyond the suite's one call per sample (docs/threats.md B7, B8, B9, B14), all
// on the op's runner: identical repeats, fresh inputs of the same shape, fingerprint twins, the
// largest sample scaled up, and the first wrong call looked at again on a fresh runner.
#include "cheats.h"
#include "op_evaluation.h"

#include <algorithm>

namespace kg::harness::evaluation {
namespace {

enum class Trial { Gone, Right, Wrong };

// One trial call. A wrong answer no rule explains is stateful_output when `unexplained_is_state`
// (the sample passed before on the same runner).
Trial call_trial(OpState& op, const Sample& s, const Judged& j, const std::string& inputs_key, const std::string& context,
                 bool unexplained_is_state, bool poison = true) {
  if (!op.runner_alive()) return Trial::Gone;
  loader::CallOptions options = op.call_options(j.ref_returns);
  options.poison = poison;
  loader::CallOutcome out = op.runner->call(j.inputs, op.schema->returns().size(), op.policy.run_call_time_s, options);
  runner_evidence(op, out, trace::format_call(s.call));
  if (out.kind != loader::CallOutcome::Kind::Ok) {
    const bool threw = out.kind == loader::CallOutcome::Kind::OpError;
    op.result.failures.push_back(
        sample_failure(s, j.index, j.inputs, threw ? policy::Category::RuntimeError : policy::Category::Crash, context + out.message));
    return out.kind == loader::CallOutcome::Kind::OpError ? Trial::Wrong : Trial::Gone;
  }
  remember(op, s, inputs_key, out.returns);
  auto mism = judge(op, j, out.returns, out.args_after);
  if (mism.empty()) return Trial::Right;
  if (!record_wrong(op, s, j.index, j, out, mism.front(), context) && unexplained_is_state)
    violation(op.result, policy::Rule::StatefulOutput,
              trace::format_call(s.call) + " passed on its first call and is wrong " + context + mism.front().detail);
  return Trial::Wrong;
}

// A wrong call once more on this runner, on identical inputs. A different answer means the
// output depends on something that is not the input (uninitialised memory, a race: B9). True
// when the repeat ran and gave no different answer.
bool repeat_wrong_call(OpState& op, const Sample& s, const Judged& j, const std::vector<c10::IValue>& wrong_returns) {
  if (!op.runner_alive()) return false;
  const std::string call = trace::format_call(s.call);
  loader::CallOutcome again =
      op.runner->call(j.inputs, op.schema->returns().size(), op.policy.run_call_time_s, op.call_options(j.ref_returns));
  runner_evidence(op, again, call);
  if (again.kind != loader::CallOutcome::Kind::Ok) return false;
  const double same = same_bytes_fraction(again.returns, wrong_returns);
  if (same >= 0 && same < 1) {
    violation(op.result, policy::Rule::NondeterministicOutput,
              call + ": wrong, and an identical repeat on the same runner gave a different answer (" +
                  std::to_string(static_cast<int>((1 - same) * 100 + 0.5)) + "% of the elements differ)");
    return false;
  }
  return true;
}

// Two identical repeats of a call it got right. Wrong the same way twice: the answer depends on
// earlier calls (state). Two different answers: it depends on something that is not the input
// at all (uninitialised memory, a race).
void repeat_right_call(OpState& op, const Sample& s, const Judged& first) {
  std::vector<std::vector<c10::IValue>> outs;
  bool wrong = false, explained = false;
  std::string detail;
  for (int k = 0; k < 2; ++k) {
    if (!op.runner_alive()) return;
    loader::CallOutcome out =
        op.runner->call(first.inputs, op.schema->returns().size(), op.policy.run_call_time_s, op.call_options(first.ref_returns));
    runner_evidence(op, out, trace::format_call(s.call));
    if (out.kind != loader::CallOutcome::Kind::Ok) return;
    remember(op, s, "s" + std::to_string(first.index), out.returns);
    auto mism = judge(op, first, out.returns, out.args_after);
    if (!mism.empty()) {
      wrong = true;
      detail = mism.front().detail;
      explained |= record_wrong(op, s, first.index, first, out, mism.front(), "on an identical repeat of a call it got right: ");
    }
    outs.push_back(out.returns);
  }
  op.result.repeated = true;
  if (wrong && !explained) {
    bool same = same_bytes_fraction(outs[0], outs[1]) == 1.0;
    violation(op.result, same ? policy::Rule::StatefulOutput : policy::Rule::NondeterministicOutput,
              trace::format_call(s.call) + ": right on its first call, " +
                  (same ? "wrong the same way on two identical repeats: " : "two identical repeats gave two different answers: ") + detail);
  }
}

std::optional<Judged> fingerprint_twin_of(const OpState& op, const Sample& s, const Judged& judged, std::mt19937_64& rng) {
  Judged j;
  j.index = judged.index;
  try {
    std::optional<std::vector<c10::IValue>> inputs = fingerprint_twin(s, judged.inputs, rng);
    if (!inputs) return std::nullopt;
    j.inputs = std::move(*inputs);
    reference(op, j);
  } catch (const std::exception&) {
    return std::nullopt;  // the reference rejects the moved values: no twin for this op
  }
  return j;
}

// Per trial round, for the first passing samples, fresh inputs of the same shape (where the
// allocator most likely hands out the addresses the previous call's inputs had) and a
// fingerprint twin of the judged inputs (same first and last values, shapes and value multiset,
// other values moved).
void fresh_rounds(OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& passed) {
  const size_t max_samples = 4;
  for (int round = 1; round < op.policy.correctness_trials; ++round) {
    const std::string r = std::to_string(round);
    for (size_t k = 0; k < passed.size() && k < max_samples; ++k) {
      const Sample& s = all[passed[k].index];
      const size_t seed_index = op.rng_index(passed[k].index) + 100000 * static_cast<size_t>(round);
      std::mt19937_64 rng = sample_rng(op.run.seed, op.folder.op, seed_index);
      Judged j;
      j.index = passed[k].index;
      j.inputs = make_inputs(*op.schema, s, rng);
      reference(op, j);
      const std::string key = "s" + std::to_string(j.index);
      if (call_trial(op, s, j, key + "r" + r, "on fresh inputs in trial round " + r + ": ", true) == Trial::Gone) return;
      std::mt19937_64 twin_rng = sample_rng(op.run.seed, op.folder.op, seed_index + 50000);
      std::optional<Judged> twin = fingerprint_twin_of(op, s, passed[k], twin_rng);
      if (twin && call_trial(op, s, *twin, key + "t" + r,
                             "on a fingerprint twin of its judged inputs (same first and last values, shapes and value "
                             "multiset; other values moved) in trial round " +
                                 r + ": ",
                             true) == Trial::Gone)
        return;
    }
    op.result.trial_rounds = round;
  }
}

// Shape specialisation (B14): the suite's samples are small, so the largest passing one is run
// again with its sizes scaled up (x4, or x2 where x4 is too large). Wrong there and right on
// every sample is what shape_specialisation_by_size calls shape_specialisation.
void enlarged_trial(OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& passed) {
  if (passed.empty()) return;
  const Judged& largest = *std::max_element(passed.begin(), passed.end(),
                                            [](const Judged& a, const Judged& b) { return input_numel(a.inputs) < input_numel(b.inputs); });
  const Sample& s = all[largest.index];
  const int64_t max_numel = int64_t{1} << 20;  // a few MB of inputs: one call, affordable for every kernel
  for (int64_t factor : {4, 2}) {
    std::optional<Sample> big = enlarged_sample(s, factor);
    if (!big || spec_numel(*big) > max_numel || spec_numel(*big) <= spec_numel(s)) continue;
    std::optional<Judged> drawn = draw_judged(op, *big, largest.index, op.rng_index(largest.index) + 300000);
    if (!drawn) continue;  // sizes tied to other arguments (views, splits): not scalable this way
    const Judged& j = *drawn;
    const std::string context = "on its largest sample with sizes x" + std::to_string(factor) + ": ";
    if (call_trial(op, *big, j, "s" + std::to_string(j.index) + "x" + std::to_string(factor), context, false) != Trial::Right)
      op.history.min_fail_numel = std::min(op.history.min_fail_numel, input_numel(j.inputs));
    return;
  }
}

// The first wrong call of the op, from any phase and explained or not, looked at again after the
// trials: once more on this runner, then as the first call of a fresh runner. The same wrong
// answer here but the right one on a fresh runner: it depends on the calls this runner served
// before (B8). Not merged with repeat_unexplained: this one needs the trials (the first wrong
// call is often a trial's) and is the only one that can tell state from a wrong kernel.
void diagnose_wrong(OpState& op, const WrongCall& w) {
  if (!repeat_wrong_call(op, w.sample, w, w.returns)) return;
  const std::string call = trace::format_call(w.sample.call);
  std::unique_ptr<loader::RunnerClient> fresh;
  if (op.run.start(&fresh, op.request)) return;
  loader::CallOutcome first = fresh->call(w.inputs, op.schema->returns().size(), op.policy.run_call_time_s, op.call_options(w.ref_returns));
  if (fresh->alive()) fresh->finish();
  if (first.kind != loader::CallOutcome::Kind::Ok) return;
  if (judge(op, w, first.returns, first.args_after).empty())
    violation(op.result, policy::Rule::StatefulOutput,
              call + ": wrong" + (w.context.empty() ? "" : " " + w.context.substr(0, w.context.rfind(':'))) +
                  ", the same wrong answer again on an identical repeat, yet right as the first call of a "
                  "freshly started runner on identical inputs");
}

}  // namespace

// Not left to diagnose_wrong: this is the only repeat under --repro and with trials.correctness < 2
// (backendbench, rl-reward), where the trials do not run, and it covers every unexplained judged
// call, not only the first wrong one.
void repeat_unexplained(OpState& op, const Sample& s, const Judged& j, const loader::CallOutcome& first) {
  if (op.history.repeats_left <= 0 || !op.runner_alive()) return;
  --op.history.repeats_left;
  repeat_wrong_call(op, s, j, first.returns);
}

// An identical repeat of a call it got right, then the fresh-input rounds, then the largest
// passing sample scaled up. The first wrong call is looked at again on a fresh runner.
void run_trials(OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& passed) {
  if (op.policy.correctness_trials < 2) return;
  if (!passed.empty()) repeat_right_call(op, all[passed.front().index], passed.front());
  if (op.result.failures.empty()) fresh_rounds(op, all, passed);
  if (op.result.failures.empty()) enlarged_trial(op, all, passed);
  if (op.history.first_wrong) diagnose_wrong(op, *op.history.first_wrong);
}

// After timing, one more judged call on the largest timed sample (fresh values) in the state
// timed calls run in: no allocation poisoning, which is otherwise the one thing a kernel can read
// to tell a judged call from a timed one (c10's junk-fill flag). A kernel that cheats only when
// it thinks it is timed (hands the work to a thread, skips it) does so here, under the judged
// call's after-return watch and comparison. CPU only: nothing is poisoned on cuda:0.
void unpoisoned_check(OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& timed) {
  if (timed.empty() || op.run.device() != loader::Device::Cpu) return;
  const Judged& largest = timed.front();
  const Sample& s = all[largest.index];
  std::optional<Judged> j = draw_judged(op, s, largest.index, op.rng_index(largest.index) + 500000);
  if (!j) return;
  if (call_trial(op, s, *j, "s" + std::to_string(j->index) + "u",
                 "on a judged call made without allocation poisoning, as timed calls are: ", false,
                 /*poison=*/false) == Trial::Wrong)
    violation(op.result, policy::Rule::ShapeSpecialisation,
              trace::format_call(s.call) +
                  " is right on judged calls and wrong on one made in the state of a timed call (no allocation "
                  "poisoning): the kernel reads the runner's state to tell evaluation from benchmarking");
}

}  // namespace kg::harness::evaluation

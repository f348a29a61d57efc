// Correctness trials beyond the suite's one call per sample (docs/threats.md B7, B8, B9, B14), all
// on the op's runner: identical repeats, fresh inputs of the same shape, fingerprint and near
// twins, the largest sample scaled up a size ladder, the size probe (the same values at a smaller
// size), and the first wrong call looked at again on a fresh runner.
#include "cheats.h"
#include "op_evaluation.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kg::harness::evaluation {
namespace {

enum class Trial { Gone, Right, Wrong };

// One trial call. A wrong answer nothing explains is stateful_output when `unexplained_is_state`
// (the sample passed before on the same runner). `call_s`, when given, gets the call's time.
Trial call_trial(OpState& op, const Sample& s, const Judged& j, const std::string& context, bool unexplained_is_state, bool poison = true,
                 double* call_s = nullptr) {
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
  if (call_s) *call_s = out.supervisor_wall_s;
  remember(op, s, j.inputs, out.returns);
  auto mism = judge(op, j, out.returns, out.args_after);
  if (mism.empty()) return Trial::Right;
  if (!record_wrong(op, s, j.index, j, out, mism.front(), context) && unexplained_is_state)
    violation(op.result, policy::Rule::StatefulOutput,
              trace::format_call(s.call) + " passed on its first call and is wrong " + context + mism.front().detail);
  return Trial::Wrong;
}

// Two identical calls of the candidate gave `a` and `b`: evidence of nondeterminism (B9) unless
// the reference, run twice on the same inputs on the evaluation device, varies as much (an
// atomics-based GPU reduction, the efficient-attention backward). The evidence, or nothing.
std::optional<std::string> spread_beyond_reference(const OpState& op, const Judged& j, const std::vector<c10::IValue>& a,
                                                   const std::vector<c10::IValue>& b) {
  Judged first, second;
  first.inputs = second.inputs = j.inputs;
  try {
    reference(op, first);
    reference(op, second);
  } catch (const std::exception&) {
    first.ref_returns = second.ref_returns = j.ref_returns;  // no second look: the reference taken as fixed
  }
  const Spread spread = nondeterminism_spread(a, b, first.ref_returns, second.ref_returns);
  if (!spread.evidence) return std::nullopt;
  return "largest difference " + fmt(spread.candidate) +
         (spread.reference > 0 ? "; the reference's own run-to-run difference on these inputs: " + fmt(spread.reference)
                               : "; the reference gives the same answer every time");
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
    if (auto spread = spread_beyond_reference(op, j, wrong_returns, again.returns))
      violation(op.result, policy::Rule::NondeterministicOutput,
                call + ": wrong, and an identical repeat on the same runner gave a different answer (" +
                    std::to_string(static_cast<int>((1 - same) * 100 + 0.5)) + "% of the elements differ, " + *spread + ")");
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
    remember(op, s, first.inputs, out.returns);
    auto mism = judge(op, first, out.returns, out.args_after);
    if (!mism.empty()) {
      wrong = true;
      detail = mism.front().detail;
      explained |= record_wrong(op, s, first.index, first, out, mism.front(), "on an identical repeat of a call it got right: ");
    }
    outs.push_back(out.returns);
  }
  op.result.repeated = true;
  if (!wrong || explained) return;
  const std::string call = trace::format_call(s.call);
  if (same_bytes_fraction(outs[0], outs[1]) == 1.0) {
    violation(op.result, policy::Rule::StatefulOutput,
              call + ": right on its first call, wrong the same way on two identical repeats: " + detail);
  } else if (auto spread = spread_beyond_reference(op, first, outs[0], outs[1])) {
    violation(op.result, policy::Rule::NondeterministicOutput,
              call + ": right on its first call, two identical repeats gave two different answers (" + *spread + "): " + detail);
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

// A passing sample called on its judged inputs with 1 to 3 elements of each floating tensor
// changed: a cache keyed on a sampled hash of a few bytes takes it for the judged call and returns
// that call's output, which is then bit for bit an earlier call's on other values (B7).
Trial near_twin_trial(OpState& op, const Sample& s, const Judged& judged, size_t seed_index) {
  std::mt19937_64 rng = sample_rng(op.run.seed, op.folder.op, seed_index + 70000);
  Judged j;
  j.index = judged.index;
  try {
    std::optional<std::vector<c10::IValue>> inputs = near_twin(s, judged.inputs, rng);
    if (!inputs) return Trial::Right;
    j.inputs = std::move(*inputs);
    reference(op, j);
  } catch (const std::exception&) {
    return Trial::Right;  // the reference rejects the changed values: no twin for this op
  }
  remember(op, s, judged.inputs, judged.returns);  // the judged call's answer, to recognise it
  return call_trial(op, s, j, "on a near twin of its judged inputs (a few elements changed): ", false);
}

// Per trial round, for the first passing samples, fresh inputs of the same shape (where the
// allocator most likely hands out the addresses the previous call's inputs had) and a
// fingerprint twin of the judged inputs (same first and last values, shapes and value multiset,
// other values moved); in the first round also a near twin (a few elements changed).
void fresh_rounds(OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& passed) {
  const size_t max_samples = 4, max_near_twins = 2;
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
      if (call_trial(op, s, j, "on fresh inputs in trial round " + r + ": ", true) == Trial::Gone) return;
      std::mt19937_64 twin_rng = sample_rng(op.run.seed, op.folder.op, seed_index + 50000);
      std::optional<Judged> twin = fingerprint_twin_of(op, s, passed[k], twin_rng);
      if (twin && call_trial(op, s, *twin,
                             "on a fingerprint twin of its judged inputs (same first and last values, shapes and value "
                             "multiset; other values moved) in trial round " +
                                 r + ": ",
                             true) == Trial::Gone)
        return;
      if (round == 1 && k < max_near_twins && near_twin_trial(op, s, passed[k], seed_index) == Trial::Gone) return;
    }
    op.result.trial_rounds = round;
  }
}

// A scaled-up sample's inputs (from the op's draws ahead when it made them) and reference, with
// the reference's time; nothing when the sizes are tied to other arguments (views, splits) or the
// reference rejects them.
std::optional<Judged> draw_scaled(const OpState& op, const Sample& big, size_t index, size_t seed_index, double* reference_s,
                                  double* draw_s = nullptr) {
  Judged j;
  j.index = index;
  try {
    const Clock::time_point drawn = Clock::now();
    j.inputs = draw_inputs(op, op.draws_ahead.get(), big, seed_index);
    if (draw_s) *draw_s = seconds_since(drawn);
    const Clock::time_point t0 = Clock::now();
    reference(op, j);
    *reference_s = seconds_since(t0);
  } catch (const std::exception&) { return std::nullopt; }
  return j;
}

// One scaled-up call of the largest passing sample. Right: it also counts as a passing size;
// wrong: a failing one, for the size probe to look at.
Trial scaled_call(OpState& op, const Sample& big, const Judged& j, int64_t factor, double* call_s) {
  const std::string context = "on its largest sample with sizes x" + std::to_string(factor) + ": ";
  const Trial t = call_trial(op, big, j, context, false, true, call_s);
  const int64_t n = input_numel(j.inputs);
  if (t == Trial::Right) op.history.max_pass_numel = std::max(op.history.max_pass_numel, n);
  else op.history.min_fail_numel = std::min(op.history.min_fail_numel, n);
  return t;
}

double least_reference_time(const OpState& op, const Judged& judged, int timings);

constexpr int64_t kLadderTarget = int64_t{1} << 22;         // input elements the size ladder reaches
constexpr double kLadderReferenceS = 0.3;                   // a reference slower than this is too large a rung
constexpr double kLadderCallS = 1.0;                        // the candidate's predicted time, at most
constexpr int64_t kScaledMaxNumel = int64_t{1} << 20;       // the first scaling: a few MB of inputs, one call affordable for every kernel
constexpr size_t kScaledSeed = 300000, kRungSeed = 310000;  // added to the sample's seed index

// The smallest factor above `from` that gives the sample at least kLadderTarget input elements.
std::optional<int64_t> ladder_factor(const Sample& s, int64_t from) {
  auto numel_at = [&](int64_t f) {
    std::optional<Sample> big = enlarged_sample(s, f);
    return big ? spec_numel(*big) : int64_t{-1};
  };
  for (int64_t f = from * 2; f <= (int64_t{1} << 12); f *= 2) {
    const int64_t n = numel_at(f);
    if (n < 0) return std::nullopt;
    if (n < kLadderTarget) continue;
    int64_t lo = f / 2 + 1, hi = f;  // the smallest factor in (f/2, f] that reaches the target
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (numel_at(mid) >= kLadderTarget) hi = mid;
      else lo = mid + 1;
    }
    return hi;
  }
  return std::nullopt;
}

// The ladder's top rung above factor `from`: its factor and the scaled sample.
std::optional<std::pair<int64_t, Sample>> ladder_rung(const Sample& s, int64_t from) {
  std::optional<int64_t> factor = ladder_factor(s, from);
  if (!factor) return std::nullopt;
  std::optional<Sample> big = enlarged_sample(s, *factor);
  if (!big) return std::nullopt;
  return std::make_pair(*factor, std::move(*big));
}

// The size ladder's top rung (B14): the sample scaled to kLadderTarget input elements, called
// once, where that is affordable: from a right call at factor `from` (its reference and call
// times), the reference is expected (its work growing up to x^1.5 with the inputs, as a
// product's) and measured under kLadderReferenceS, and the candidate's time, predicted from the
// reference's growth, under kLadderCallS. Flops-heavy ops stop short of it.
void climb_ladder(OpState& op, const Sample& s, size_t index, int64_t from, double reference_s, double call_s) {
  std::optional<Sample> base = enlarged_sample(s, from);
  std::optional<std::pair<int64_t, Sample>> rung = ladder_rung(s, from);
  if (!base || !rung) return;
  const Sample& big = rung->second;
  const double numel_growth = static_cast<double>(spec_numel(big)) / static_cast<double>(std::max<int64_t>(1, spec_numel(*base)));
  const double base_reference_s = std::max(reference_s, 1e-4);
  if (base_reference_s * std::pow(numel_growth, 1.5) > kLadderReferenceS) return;
  double t = 0, draw_s = 0;
  std::optional<Judged> j = draw_scaled(op, big, index, op.rng_index(index) + kRungSeed, &t, &draw_s);
  if (!j) return;
  const double budget = std::min(kLadderCallS, op.policy.run_call_time_s / 8);
  // The candidate's time grows like its inputs at least and like a product's (x^1.5) at most; the
  // reference's own growth places it between. Not more: a base reference under a clock tick
  // (sum over 2^18 elements: tens of us, clamped to 1e-4 s) against a big one that pays page
  // faults made the ratio 320 for 16x the elements, and a size-only cheat went unclimbed on
  // those seeds. A kernel slower than x^1.5 still meets the policy's call limit, >= 8x the budget.
  auto climbs = [&](double reference_t) {
    const double growth = std::clamp(reference_t / base_reference_s, numel_growth, std::pow(numel_growth, 1.5));
    return reference_t <= kLadderReferenceS && call_s * growth <= budget;
  };
  // A second timing (without a preemption or the first call's page faults) can only lower t, and
  // a lower t only makes the rung more affordable: it is taken only when the first says no.
  if (!climbs(t) && t <= 3 * kLadderReferenceS) t = std::min(t, least_reference_time(op, *j, 1));
  if (!climbs(t)) return;
  OpResult::RungSeconds& parts = op.result.rung_parts;
  parts.climbed = true;
  parts.draw = draw_s;
  parts.reference = t;
  const Clock::time_point called = Clock::now();
  scaled_call(op, big, *j, rung->first, &parts.awaited);
  parts.call = seconds_since(called);
}

// The reference on `judged`'s inputs, timed `timings` times: the least (the reference's own cost,
// without a preemption or first-call page faults), the base of a ladder that starts from it.
double least_reference_time(const OpState& op, const Judged& judged, int timings) {
  double least = std::numeric_limits<double>::infinity();
  for (int k = 0; k < timings; ++k) {
    Judged j;
    j.inputs = judged.inputs;
    const Clock::time_point t0 = Clock::now();
    try {
      reference(op, j);
    } catch (const std::exception&) { return std::numeric_limits<double>::infinity(); }
    least = std::min(least, seconds_since(t0));
  }
  return least;
}

// The scalings the enlarged trial tries on sample `s`, in order: x4, then x2, each within
// kScaledMaxNumel input elements and larger than `s`.
std::vector<std::pair<int64_t, Sample>> scalings(const Sample& s) {
  std::vector<std::pair<int64_t, Sample>> out;
  for (int64_t factor : {4, 2}) {
    std::optional<Sample> big = enlarged_sample(s, factor);
    if (big && spec_numel(*big) <= kScaledMaxNumel && spec_numel(*big) > spec_numel(s)) out.emplace_back(factor, std::move(*big));
  }
  return out;
}

// The passing sample the enlarged trial scales: the one with the most input elements.
const Judged& largest_passed(const std::vector<Judged>& passed) {
  return *std::max_element(passed.begin(), passed.end(),
                           [](const Judged& a, const Judged& b) { return input_numel(a.inputs) < input_numel(b.inputs); });
}

// The draws enlarged_trial makes on sample `s` (the suite's `index`) when its scaled calls pass:
// the first scaling and the ladder's top rung above it.
std::vector<DrawsAhead::Want> enlarged_draws(const OpState& op, const Sample& s, size_t index) {
  std::vector<DrawsAhead::Want> wants;
  if (spec_numel(s) >= kLadderTarget) return wants;
  auto want = [&](size_t seed_index, Sample sample) {
    wants.push_back({seed_index, std::move(sample), sample_rng(op.run.seed, op.folder.op, seed_index)});
  };
  std::vector<std::pair<int64_t, Sample>> scaled = scalings(s);
  const int64_t from = scaled.empty() ? 1 : scaled.front().first;
  if (!scaled.empty()) want(op.rng_index(index) + kScaledSeed, std::move(scaled.front().second));
  if (std::optional<std::pair<int64_t, Sample>> rung = ladder_rung(s, from)) want(op.rng_index(index) + kRungSeed, std::move(rung->second));
  return wants;
}

// Shape specialisation (B14): the suite's samples are small, so the largest passing one is run
// again with its sizes scaled up (x4, or x2 where x4 is too large, within 2^20 input elements),
// then, right there, once more at the size ladder's top rung (2^22 input elements where the op
// allows; not where the suite's samples are that large already). A wrong answer is left to the
// size probe.
void enlarged_trial(OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& passed) {
  if (passed.empty()) return;
  const Judged& largest = largest_passed(passed);
  const Sample& s = all[largest.index];
  if (spec_numel(s) >= kLadderTarget) return;
  for (const auto& [factor, big] : scalings(s)) {
    double reference_s = 0, call_s = 0;
    std::optional<Judged> drawn = draw_scaled(op, big, largest.index, op.rng_index(largest.index) + kScaledSeed, &reference_s);
    if (!drawn) continue;  // sizes tied to other arguments (views, splits): not scalable this way
    if (scaled_call(op, big, *drawn, factor, &call_s) != Trial::Right) return;
    // The ladder's gate scales this time up by the rung's growth (up to x^1.5): one measurement
    // inflated by the machine's load (a preemption, the first call's page faults) would skip the
    // rung on a busy machine and not on an idle one, and a size-only cheat would pass or not with
    // the load. The least of three measurements is the reference's own cost.
    reference_s = std::min(reference_s, least_reference_time(op, *drawn, 2));
    climb_ladder(op, s, largest.index, factor, reference_s, call_s);
    return;
  }
  // Too large to scale within 2^20: the ladder starts from the sample itself (the lesser of two
  // reference timings, as above).
  climb_ladder(op, s, largest.index, 1, least_reference_time(op, largest, 2), largest.call_s);
}

}  // namespace

std::vector<DrawsAhead::Want> enlarged_trial_draws(const OpState& op, const std::vector<Sample>& all) {
  if (all.empty() || op.policy.correctness_trials < 2 || op.run.options.repro || !draws_ahead_enabled()) return {};
  // The largest sample, as enlarged_trial picks it among the passing ones when all pass.
  size_t index = 0;
  for (size_t i = 1; i < all.size(); ++i)
    if (spec_numel(all[i]) > spec_numel(all[index])) index = i;
  return enlarged_draws(op, all[index], index);
}

namespace {

// The size probe's inputs: the subject's cut by the smallest factor that brings them within the
// largest passing size, with their reference. Nothing when no cut gets there.
std::optional<Judged> probe_inputs(const OpState& op, const WrongCall& subject, int64_t* factor) {
  for (int64_t f = 2; f <= 64; f *= 2) {
    std::optional<std::vector<c10::IValue>> inputs = leading_slice(subject.inputs, f);
    if (!inputs) return std::nullopt;
    if (input_numel(*inputs) > op.history.max_pass_numel) continue;
    Judged j;
    j.index = subject.index;
    j.inputs = std::move(*inputs);
    try {
      reference(op, j);
    } catch (const std::exception&) { return std::nullopt; }  // sizes tied to other arguments
    *factor = f;
    return j;
  }
  return std::nullopt;
}

// Whether the op is local for this slicing: the probe's reference is, bit for bit, the leading
// slice of the large call's.
bool local_for_slicing(const WrongCall& big, const Judged& probe) {
  std::optional<std::vector<c10::IValue>> ref_slice = slice_like(big.ref_returns, probe.ref_returns);
  return ref_slice && bitwise_equal(*ref_slice, probe.ref_returns);
}

// Evidence A (local ops): right on the probe, wrong on the same values at the same positions of
// the large call. When the candidate's answers there are bit for bit those it gave on the probe,
// its answer did not change with the size: what changed is how it was judged (the probe small
// enough for the float64 result that accepts an answer more exact than the library's, the large
// call not), and that is no evidence.
std::optional<std::string> same_values_other_answer(const OpState& op, const WrongCall& big, const Judged& probe,
                                                    const std::vector<c10::IValue>& probe_returns) {
  std::optional<std::vector<c10::IValue>> cand_slice = slice_like(big.returns, probe.ref_returns);
  if (!cand_slice) return std::nullopt;
  if (bitwise_equal(*cand_slice, probe_returns)) return std::nullopt;
  for (size_t i = 0; i < cand_slice->size() && i < probe.ref_returns.size(); ++i)
    if (auto m = compare_values(probe.ref_returns[i], (*cand_slice)[i], op.policy, op.folder.op, "return " + std::to_string(i)))
      return "right on " + shapes_text(probe.inputs) + " (the leading slice of the inputs of the wrong call on " + shapes_text(big.inputs) +
             "), wrong on that call at the same positions on the same values (" + m->detail + "): the answer depends on the size alone";
  return std::nullopt;
}

// Evidence B (other ops): against float64, the candidate's error is about the library's on the
// probe and far beyond it on the large call.
std::optional<std::string> error_grows_with_size(const OpState& op, const WrongCall& big, const Judged& probe,
                                                 const std::vector<c10::IValue>& probe_returns) {
  // Integer results: the reference is exact, its own truth; a wrapped-around accumulator is an
  // honest overflow.
  auto truth = [&op](const Judged& j) {
    std::optional<std::vector<c10::IValue>> t = reference_f64(op, j.inputs);
    if (!t && exact_values(j.ref_returns)) t = j.ref_returns;
    return t;
  };
  std::optional<std::vector<c10::IValue>> truth_small = truth(probe), truth_large = truth(big);
  if (!truth_small || !truth_large || differs_by_wraparound(big.returns, big.ref_returns)) return std::nullopt;
  auto cs = error_vs_truth(probe_returns, *truth_small), ls = error_vs_truth(probe.ref_returns, *truth_small);
  auto cl = error_vs_truth(big.returns, *truth_large), ll = error_vs_truth(big.ref_returns, *truth_large);
  if (!cs || !ls || !cl || !ll) return std::nullopt;
  std::optional<ErrorRatios> r = size_dependent_error(*cs, *ls, *cl, *ll);
  if (!r) return std::nullopt;
  return "against the exact result, its error is " + fmt(r->small) + "x the library's own on " + shapes_text(probe.inputs) +
         " (the leading slice of the inputs of the wrong call on " + shapes_text(big.inputs) + ") and " + fmt(r->large) +
         "x on that call: exact at the small size, not at the large one";
}

// B14: right on every small sample and wrong on every larger one, looked at with a probe that
// keeps the values and changes the size. A rule needs the probe to show the size alone decides
// (evidence A or B); a race (a different answer on an identical repeat), imprecision or a
// mistake that shows at the small size too is no such evidence.
void size_probe(OpState& op) {
  CallHistory& h = op.history;
  if (op.result.passed < 2 || !h.size_probe_subject || h.min_fail_numel <= h.max_pass_numel || !op.runner_alive()) return;
  const WrongCall& big = *h.size_probe_subject;
  int64_t factor = 0;
  std::optional<Judged> probe = probe_inputs(op, big, &factor);
  if (!probe) return;
  const size_t n_returns = op.schema->returns().size();
  loader::CallOutcome again = op.runner->call(big.inputs, n_returns, op.policy.run_call_time_s, op.call_options(big.ref_returns));
  runner_evidence(op, again, trace::format_call(big.sample.call));
  if (again.kind != loader::CallOutcome::Kind::Ok || same_bytes_fraction(again.returns, big.returns) != 1.0) return;
  if (!op.runner_alive()) return;
  loader::CallOutcome out = op.runner->call(probe->inputs, n_returns, op.policy.run_call_time_s, op.call_options(probe->ref_returns));
  runner_evidence(op, out, trace::format_call(big.sample.call) + " cut by " + std::to_string(factor));
  if (out.kind != loader::CallOutcome::Kind::Ok || !judge(op, *probe, out.returns, out.args_after).empty()) return;
  std::optional<std::string> evidence = local_for_slicing(big, *probe) ? same_values_other_answer(op, big, *probe, out.returns)
                                                                       : error_grows_with_size(op, big, *probe, out.returns);
  if (evidence) h.size_evidence = trace::format_call(big.sample.call) + ": " + *evidence;
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

// An identical repeat of a call it got right, then the fresh-input rounds, the same-address
// trial and the largest passing sample scaled up; then (with any number of trials) the size
// probe. The first wrong call is looked at again on a fresh runner.
void run_trials(OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& passed) {
  const bool trials = op.policy.correctness_trials >= 2;
  // The draws made ahead were for the sample predicted largest. Another one (the predicted one
  // skipped or failed) gets its draws started now, beside the trials before the enlarged one; a
  // failure already recorded means no enlarged trial, and no draws.
  if (trials && !passed.empty() && op.result.failures.empty() && draws_ahead_enabled()) {
    const size_t largest = largest_passed(passed).index;
    std::vector<DrawsAhead::Want> wants = enlarged_draws(op, all[largest], largest);
    if (wants.empty() || !(op.draws_ahead && op.draws_ahead->has_all(wants))) {
      op.draws_ahead.reset();
      if (!wants.empty()) op.draws_ahead = std::make_unique<DrawsAhead>(*op.schema, std::move(wants));
    }
  } else {
    op.draws_ahead.reset();
  }
  OpResult::JudgingSeconds& parts = op.result.judging_parts;
  Clock::time_point t0 = Clock::now();
  auto lap = [&t0](double& part) {
    part += seconds_since(t0);
    t0 = Clock::now();
  };
  if (trials) {
    if (!passed.empty()) repeat_right_call(op, all[passed.front().index], passed.front());
    lap(parts.repeat);
    if (op.result.failures.empty()) fresh_rounds(op, all, passed);
    lap(parts.fresh);
    if (op.result.failures.empty()) same_address_trial(op, all, passed);
    lap(parts.same_address);
    if (op.result.failures.empty()) enlarged_trial(op, all, passed);
    lap(parts.enlarged);
  }
  size_probe(op);
  if (trials && op.history.first_wrong) diagnose_wrong(op, *op.history.first_wrong);
  lap(parts.diagnosis);
}

// After timing, judged calls on the largest timed sample (fresh values) in the state timed calls
// run in: no allocation poisoning, which is otherwise the one thing a kernel can read to tell a
// judged call from a timed one (c10's junk-fill flag). A kernel that cheats only when it thinks it
// is timed (hands the work to a thread, skips it) does so here, under the judged call's
// after-return watch and comparison. A thread that finishes the work before the runner's
// after-return snapshot begins (the runner preempted on a loaded machine: seen once in a full
// ctest run on two cores) leaves nothing to see on that call, so up to three such calls are made,
// each a fresh chance; the first evidence ends them. CPU only: nothing is poisoned on cuda:0.
void unpoisoned_check(OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& timed) {
  if (timed.empty() || op.run.device() != loader::Device::Cpu) return;
  const Judged& largest = timed.front();
  const Sample& s = all[largest.index];
  constexpr int kCalls = 3;
  for (int k = 0; k < kCalls; ++k) {
    std::optional<Judged> j = draw_judged(op, s, largest.index, op.rng_index(largest.index) + 500000 + static_cast<size_t>(k));
    if (!j) return;
    const size_t violations_before = op.result.violations.size();
    const Trial t = call_trial(op, s, *j, "on a judged call made without allocation poisoning, as timed calls are: ", false,
                               /*poison=*/false);
    if (t == Trial::Wrong) {
      violation(op.result, policy::Rule::ShapeSpecialisation,
                trace::format_call(s.call) +
                    " is right on judged calls and wrong on one made in the state of a timed call (no allocation "
                    "poisoning): the kernel reads the runner's state to tell evaluation from benchmarking");
      return;
    }
    if (t == Trial::Gone || op.result.violations.size() > violations_before || !op.result.failures.empty()) return;
  }
}

}  // namespace kg::harness::evaluation

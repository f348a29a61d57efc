// The same-address trial (docs/threats.md B7): fresh inputs of the same shape usually land at the
// addresses the previous call's inputs had, but never all of them at once. Here the runner writes
// fresh values into the very buffers of a call it has just made (every input at its old address,
// strides and storage offsets unchanged) and calls again: an output cache keyed on the addresses
// of every input replays, and leftover_outputs names it (replayed_output).
#include "op_evaluation.h"

#include "kernelgate/trace.h"

namespace kg::harness::evaluation {
namespace {

// The second call of the pair as an outcome of its own, for judge() and record_wrong().
loader::CallOutcome second_call(const loader::CallOutcome& pair) {
  loader::CallOutcome second = pair;
  second.returns = pair.more.front().returns;
  second.args_after = pair.more.front().args_after;
  second.more.clear();
  return second;
}

// One pair on sample `judged`: its judged values again, then `fresh` in the same buffers. False
// when the runner is gone or the call failed (recorded as a failure).
bool same_address_pair(OpState& op, const Sample& s, const Judged& judged, const Judged& fresh) {
  const std::string call = trace::format_call(s.call);
  loader::CallOptions options = op.call_options(judged.ref_returns);
  options.more_inputs = {fresh.inputs};
  options.second_set_in_place = true;
  loader::CallOutcome pair = op.runner->call(judged.inputs, op.schema->returns().size(), op.policy.run_call_time_s, options);
  runner_evidence(op, pair, call);
  if (pair.kind != loader::CallOutcome::Kind::Ok || pair.more.size() != 1) {
    const bool threw = pair.kind == loader::CallOutcome::Kind::OpError;
    op.result.failures.push_back(sample_failure(s, judged.index, fresh.inputs,
                                                threw ? policy::Category::RuntimeError : policy::Category::Crash,
                                                "on fresh values written into the buffers of its previous call: " + pair.message));
    return false;
  }
  remember(op, s, judged.inputs, pair.returns);
  auto first = judge(op, judged, pair.returns, pair.args_after);
  if (!first.empty()) {
    record_wrong(op, s, judged.index, judged, pair, first.front(), "on an identical repeat of a call it got right: ");
    return true;
  }
  const loader::CallOutcome second = second_call(pair);
  remember(op, s, fresh.inputs, second.returns);
  auto mism = judge(op, fresh, second.returns, second.args_after);
  if (!mism.empty())
    record_wrong(op, s, fresh.index, fresh, second, mism.front(),
                 "on fresh values written into the buffers of its previous call (every input at its old address): ");
  return true;
}

}  // namespace

void same_address_trial(OpState& op, const std::vector<Sample>& all, const std::vector<Judged>& passed) {
  const size_t max_samples = 2;
  for (size_t k = 0; k < passed.size() && k < max_samples; ++k) {
    if (!op.runner_alive()) return;
    const Sample& s = all[passed[k].index];
    std::optional<Judged> fresh = draw_judged(op, s, passed[k].index, op.rng_index(passed[k].index) + 700000);
    if (!fresh) continue;  // the reference rejects the drawn values: no fresh set for this sample
    if (!same_address_pair(op, s, passed[k], *fresh)) return;
  }
}

}  // namespace kg::harness::evaluation

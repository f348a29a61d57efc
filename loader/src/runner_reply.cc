// check_call_reply: see runner_reply.h. Each step reads one part of the reply into the outcome,
// or names the field that breaks the protocol; the first violation ends the check.
#include "runner_reply.h"

#include "kernelgate/prefault.h"
#include "kernelgate/timing_stop.h"
#include "kernelgate/wire.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace kg::loader {
namespace {

using Violation = std::optional<ReplyViolation>;

Violation violation(std::string field, std::string message) { return ReplyViolation{std::move(field), std::move(message)}; }

std::string indexed(const char* field, size_t i) { return std::string(field) + "[" + std::to_string(i) + "]"; }

std::string bounded(const char* s, size_t cap) { return std::string(s, strnlen(s, cap)); }

Violation check_counts(const protocol::CallResultMsg& r, const ReplyExpectation& e) {
  if (r.call_id != e.call_id)
    return violation("call_id", "call result for call " + std::to_string(r.call_id) + ", expected " + std::to_string(e.call_id));
  if (r.n_times > e.reps || r.n_times > static_cast<uint32_t>(protocol::kMaxTimedReps))
    return violation("n_times", "runner reported " + std::to_string(r.n_times) + " timings for " + std::to_string(e.reps) + " timed calls");
  return std::nullopt;
}

// Whether the calls completed (*completed); an op that failed ends the reply: OpError, or Died
// for a device error (the runner's CUDA context is unusable: it exits, and the next call gets a
// fresh runner).
Violation read_status(const protocol::CallResultMsg& r, CallOutcome& out, bool* completed) {
  *completed = false;
  switch (static_cast<protocol::CallStatus>(r.status)) {
    case protocol::CallStatus::Ok: *completed = true; return std::nullopt;
    case protocol::CallStatus::Exception:
    case protocol::CallStatus::BadInput: out.kind = CallOutcome::Kind::OpError; return std::nullopt;
    case protocol::CallStatus::OutputTooLarge:
      out.kind = CallOutcome::Kind::OpError;
      out.message = "outputs larger than the room given for them: " + out.message;
      return std::nullopt;
    case protocol::CallStatus::DeviceError:
      out.kind = CallOutcome::Kind::Died;
      out.message = "device error: " + out.message;
      return std::nullopt;
  }
  return violation("status", "unknown call status " + std::to_string(r.status));
}

// Per timed call: its time and idle wait, each within the supervisor's clock, and together too:
// the timed calls ran one after another inside the exchange the supervisor clocked.
Violation read_times(const protocol::CallResultMsg& r, CallOutcome& out) {
  const double wall = out.supervisor_wall_s;
  double sum = 0;
  for (uint32_t i = 0; i < r.n_times; ++i) {
    const double t = r.times_s[i], idle = r.idle_wait_s[i];
    if (!(t >= 0) || t > wall)
      return violation(indexed("times_s", i),
                       "runner reported a time of " + std::to_string(t) + " s, outside what the supervisor's clock allows");
    if (!(idle >= 0) || idle > wall)
      return violation(indexed("idle_wait_s", i), "runner reported an idle wait of " + std::to_string(idle) + " s");
    sum += t;
    out.times_s.push_back(t);
    out.idle_wait_s.push_back(idle);
  }
  if (sum > wall * 1.0001 + 1e-6)
    return violation("times_s", "runner's timed calls add up to " + std::to_string(sum) + " s, more than the supervisor's " +
                                    std::to_string(wall) + " s around them");
  return std::nullopt;
}

// Fewer timed calls than asked for only where the call allowed a stop on precision, and only
// when the times reported show the median as precise as asked (the runner's own decision,
// checked with the same function).
Violation check_stop(const protocol::CallResultMsg& r, const ReplyExpectation& e) {
  if (r.n_times == e.reps) return std::nullopt;
  const std::string stopped = "runner stopped after " + std::to_string(r.n_times) + " of " + std::to_string(e.reps) + " timed calls";
  if (!(e.stop_rel_error > 0)) return violation("n_times", stopped + "; the call asked for all of them");
  if (r.n_times < e.stop_min_reps)
    return violation("n_times", stopped + ", before the " + std::to_string(e.stop_min_reps) + " it had to time");
  const std::vector<double> sorted = protocol::sorted_times(r.times_s, r.n_times);
  if (!protocol::timed_calls_may_stop(sorted.data(), sorted.size(), e.stop_min_reps, e.stop_rel_error))
    return violation("n_times", stopped + " with their median known to within +-" +
                                    std::to_string(100 * protocol::median_rel_error(sorted.data(), sorted.size())) + "%, not the +-" +
                                    std::to_string(100 * e.stop_rel_error) + "% asked for");
  return std::nullopt;
}

Violation read_timer(const protocol::CallResultMsg& r, CallOutcome& out) {
  switch (static_cast<protocol::Timer>(r.timer)) {
    case protocol::Timer::SteadyClock: out.timer = "steady_clock"; return std::nullopt;
    case protocol::Timer::CudaEvent: out.timer = "cuda_event"; return std::nullopt;
  }
  return violation("timer", "unknown timer " + std::to_string(r.timer));
}

void read_evidence(const protocol::CallResultMsg& r, CallOutcome& out) { out.observations = observations_from_evidence(r.evidence); }

// Operator names: each non-empty, terminated, printable ASCII without spaces.
Violation read_dispatched(const protocol::CallResultMsg& r, CallOutcome& out) {
  if (r.n_dispatched > protocol::kMaxDispatched)
    return violation("n_dispatched", "runner reported " + std::to_string(r.n_dispatched) + " dispatched operators");
  for (uint32_t i = 0; i < r.n_dispatched; ++i) {
    const char* name = r.dispatched[i];
    const size_t len = strnlen(name, protocol::kDispatchedNameBytes);
    if (len == 0 || len == protocol::kDispatchedNameBytes)
      return violation(indexed("dispatched", i), "dispatched operator " + std::to_string(i) + " is empty or not terminated");
    if (!std::all_of(name, name + len, [](char c) { return c > 32 && c < 127; }))
      return violation(indexed("dispatched", i), "dispatched operator " + std::to_string(i) + " has unprintable bytes");
    out.dispatched.emplace_back(name, len);
  }
  return std::nullopt;
}

// One entry per return (up to kMaxReturnAlias), each an argument's index or a kAlias* value.
Violation read_return_alias(const protocol::CallResultMsg& r, const ReplyExpectation& e, CallOutcome& out) {
  if (r.n_return_alias != std::min<size_t>(e.n_returns, protocol::kMaxReturnAlias))
    return violation("n_return_alias",
                     "runner reported aliasing for " + std::to_string(r.n_return_alias) + " returns of " + std::to_string(e.n_returns));
  for (uint32_t i = 0; i < r.n_return_alias; ++i) {
    const int32_t a = r.return_alias[i];
    if (a < protocol::kAliasNotTensor || a >= static_cast<int64_t>(e.n_args))
      return violation(indexed("return_alias", i), "return " + std::to_string(i) + " reported as aliasing argument " + std::to_string(a));
    out.return_alias.push_back(a);
  }
  return std::nullopt;
}

// Set k's encoded list: its returns, then its arguments after the call.
Violation decode_output_set(size_t k, const uint8_t* bytes, uint64_t len, const ReplyExpectation& e, CallOutcome& out) {
  std::vector<c10::IValue> values;
  try {
    values = wire::decode(bytes, len);
  } catch (const wire::WireError& err) {
    return violation(indexed("output_region", k), "output region, set " + std::to_string(k) + ": " + err.what());
  }
  if (values.size() != e.n_returns + e.n_args)
    return violation(indexed("output_region", k), "output set " + std::to_string(k) + " holds " + std::to_string(values.size()) +
                                                      " values, expected " + std::to_string(e.n_returns + e.n_args));
  CallOutcome::SetResult set;
  set.returns.assign(values.begin(), values.begin() + static_cast<long>(e.n_returns));
  set.args_after.assign(values.begin() + static_cast<long>(e.n_returns), values.end());
  if (k == 0) {
    out.returns = std::move(set.returns);
    out.args_after = std::move(set.args_after);
  } else {
    out.more.push_back(std::move(set));
  }
  return std::nullopt;
}

// The output sets lie back to back inside the region and exactly cover the bytes the runner
// claims; each decodes (as hostile bytes) to the returns and the arguments.
Violation read_output_sets(const protocol::CallResultMsg& r, const ReplyExpectation& e, const uint8_t* region, size_t capacity,
                           CallOutcome& out) {
  if (r.output_bytes > capacity)
    return violation("output_bytes",
                     "runner claims " + std::to_string(r.output_bytes) + " output bytes in a region of " + std::to_string(capacity));
  // Timed calls that stopped on precision return the sets they reached.
  const size_t sets = e.reps > 0 ? std::min<size_t>(e.n_sets, size_t{e.warmup} + r.n_times) : e.n_sets;
  if (r.n_sets != sets || sets > protocol::kMaxInputSets)
    return violation("n_sets", "runner returned " + std::to_string(r.n_sets) + " output sets for " + std::to_string(sets) +
                                   (sets == e.n_sets ? " input sets" : " input sets its calls used"));
  protocol::prefault_for_reading(region, 0, r.output_bytes);  // a hint (kernelgate/prefault.h)
  uint64_t offset = 0;
  for (size_t k = 0; k < sets; ++k) {
    const uint64_t len = r.set_output_bytes[k];
    if (len > r.output_bytes - offset)
      return violation(indexed("set_output_bytes", k), "output set " + std::to_string(k) + " of " + std::to_string(len) +
                                                           " bytes runs past the " + std::to_string(r.output_bytes) + " output bytes");
    if (Violation v = decode_output_set(k, region + offset, len, e, out)) return v;
    offset += len;
  }
  if (offset != r.output_bytes)
    return violation("output_bytes",
                     "output sets add up to " + std::to_string(offset) + " bytes, the runner claims " + std::to_string(r.output_bytes));
  return std::nullopt;
}

}  // namespace

CheckedReply check_call_reply(const protocol::CallResultMsg& reply, const ReplyExpectation& expect, const uint8_t* output_region,
                              size_t output_capacity) {
  CheckedReply c;
  CallOutcome& out = c.outcome;
  out.supervisor_wall_s = expect.supervisor_wall_s;
  out.message = bounded(reply.message, sizeof reply.message);
  bool completed = false;
  if ((c.violation = check_counts(reply, expect)) || (c.violation = read_status(reply, out, &completed)) || !completed) return c;
  if ((c.violation = read_times(reply, out)) || (c.violation = check_stop(reply, expect)) || (c.violation = read_timer(reply, out)))
    return c;
  read_evidence(reply, out);
  if ((c.violation = read_dispatched(reply, out)) || (c.violation = read_return_alias(reply, expect, out)) ||
      (c.violation = read_output_sets(reply, expect, output_region, output_capacity, out)))
    return c;
  out.kind = CallOutcome::Kind::Ok;
  return c;
}

}  // namespace kg::loader

// The supervisor's check of a runner's CallResult (runner_reply.h), without a runner: a valid
// reply, each corruption a hostile runner could send (sizes, counts above the limits, times
// outside the supervisor's clock, extents past the region, undecodable bytes) naming its field,
// and the evidence bits as observations.
#include "runner_reply.h"

#include "kernelgate/protocol.h"
#include "kernelgate/wire.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace {

using kg::loader::CallOutcome;
using kg::loader::check_call_reply;
using kg::loader::CheckedReply;
using kg::loader::ReplyExpectation;
using kg::policy::RunnerObservation;
namespace protocol = kg::protocol;
namespace wire = kg::wire;

// A timed call of a one-argument, one-return op over two input sets, and the valid reply to it.
struct Exchange {
  ReplyExpectation expect;
  std::unique_ptr<protocol::CallResultMsg> reply = std::make_unique<protocol::CallResultMsg>();
  std::vector<uint8_t> region = std::vector<uint8_t>(1 << 16);

  Exchange() {
    expect.call_id = 7;
    expect.reps = 3;
    expect.n_sets = 2;
    expect.n_args = 1;
    expect.n_returns = 1;
    expect.supervisor_wall_s = 1.0;
    protocol::CallResultMsg& r = *reply;
    protocol::init_header(r, protocol::MsgType::CallResult);
    r.call_id = 7;
    r.status = static_cast<uint32_t>(protocol::CallStatus::Ok);
    r.n_times = 3;
    for (int i = 0; i < 3; ++i) r.times_s[i] = 0.1;
    r.timer = static_cast<uint32_t>(protocol::Timer::SteadyClock);
    r.evidence = protocol::kEvidenceThreadsLeftRunning;
    r.n_dispatched = 1;
    std::strcpy(r.dispatched[0], "aten::add");
    r.n_return_alias = 1;
    r.return_alias[0] = protocol::kAliasNone;
    r.n_sets = 2;
    write_set(0, {at::full({3}, 2.0), at::full({3}, 1.0)});
    write_set(1, {at::full({3}, 4.0), at::full({3}, 3.0)});
  }
  // Output set k (after the sets before it): its returns, then its arguments.
  void write_set(uint32_t k, const std::vector<c10::IValue>& values) {
    const uint64_t at = k == 0 ? 0 : reply->output_bytes;
    reply->set_output_bytes[k] = wire::encode(values, region.data() + at, region.size() - at);
    reply->output_bytes = at + reply->set_output_bytes[k];
  }
  CheckedReply check() const { return check_call_reply(*reply, expect, region.data(), region.size()); }
};

// The field a corrupt reply is refused for, and the message's start.
void expect_violation(const Exchange& x, const std::string& field, const std::string& message) {
  CheckedReply c = x.check();
  ASSERT_TRUE(c.violation) << "accepted a reply whose " << field << " is wrong";
  EXPECT_EQ(c.violation->field, field) << c.violation->message;
  EXPECT_EQ(c.violation->message.rfind(message, 0), 0u) << c.violation->message;
}

TEST(RunnerReply, AValidReplyBecomesTheOutcome) {
  Exchange x;
  CheckedReply c = x.check();
  ASSERT_FALSE(c.violation) << c.violation->field << ": " << c.violation->message;
  const CallOutcome& out = c.outcome;
  EXPECT_EQ(out.kind, CallOutcome::Kind::Ok);
  ASSERT_EQ(out.returns.size(), 1u);
  ASSERT_EQ(out.args_after.size(), 1u);
  EXPECT_TRUE(out.returns[0].toTensor().equal(at::full({3}, 2.0)));
  EXPECT_TRUE(out.args_after[0].toTensor().equal(at::full({3}, 1.0)));
  ASSERT_EQ(out.more.size(), 1u);
  EXPECT_TRUE(out.more[0].returns[0].toTensor().equal(at::full({3}, 4.0)));
  EXPECT_TRUE(out.more[0].args_after[0].toTensor().equal(at::full({3}, 3.0)));
  EXPECT_EQ(out.times_s, std::vector<double>(3, 0.1));
  EXPECT_EQ(out.idle_wait_s, std::vector<double>(3, 0.0));
  EXPECT_EQ(out.timer, "steady_clock");
  EXPECT_EQ(out.dispatched, std::vector<std::string>{"aten::add"});
  EXPECT_EQ(out.return_alias, std::vector<int32_t>{protocol::kAliasNone});
  EXPECT_EQ(out.observations, kg::policy::ObservationSet{RunnerObservation::ThreadsLeftRunning});
  EXPECT_EQ(out.supervisor_wall_s, 1.0);
}

TEST(RunnerReply, CountsAboveWhatWasAskedAreRefused) {
  {
    Exchange x;
    x.reply->call_id = 8;
    expect_violation(x, "call_id", "call result for call 8, expected 7");
  }
  {
    Exchange x;
    x.reply->n_times = 4;
    expect_violation(x, "n_times", "runner reported 4 timings for 3 timed calls");
  }
  {
    Exchange x;
    x.expect.reps = protocol::kMaxTimedReps + 5;  // never asked for, but the array ends there
    x.reply->n_times = protocol::kMaxTimedReps + 1;
    expect_violation(x, "n_times", "runner reported 1001 timings");
  }
  {
    Exchange x;
    x.reply->n_dispatched = protocol::kMaxDispatched + 1;
    expect_violation(x, "n_dispatched", "runner reported 17 dispatched operators");
  }
  {
    Exchange x;
    x.reply->n_return_alias = 2;
    expect_violation(x, "n_return_alias", "runner reported aliasing for 2 returns of 1");
  }
  {
    Exchange x;
    x.reply->n_sets = 1;
    expect_violation(x, "n_sets", "runner returned 1 output sets for 2 input sets");
  }
  {
    Exchange x;
    x.reply->n_sets = protocol::kMaxInputSets + 1;
    expect_violation(x, "n_sets", "runner returned 1025 output sets");
  }
}

// Fewer timed calls than asked for: only under a stop on precision the times bear out, and then
// with the output sets those calls reached.
TEST(RunnerReply, TimedCallsEndEarlyOnlyWhereTheirPrecisionAllowsIt) {
  auto stopped_after_two = [](Exchange& x, double second_time) {
    x.expect.warmup = 0;
    x.reply->n_times = 2;
    x.reply->times_s[1] = second_time;
  };
  {
    Exchange x;  // no stop asked for: every timed call
    stopped_after_two(x, 0.1);
    expect_violation(x, "n_times", "runner stopped after 2 of 3 timed calls; the call asked for all of them");
  }
  {
    Exchange x;  // before the calls it had to time
    x.expect.stop_min_reps = 3;
    x.expect.stop_rel_error = 0.01;
    stopped_after_two(x, 0.1);
    expect_violation(x, "n_times", "runner stopped after 2 of 3 timed calls, before the 3 it had to time");
  }
  {
    Exchange x;  // the times do not show the median within 1%
    x.expect.stop_min_reps = 2;
    x.expect.stop_rel_error = 0.01;
    stopped_after_two(x, 0.2);
    expect_violation(x, "n_times", "runner stopped after 2 of 3 timed calls with their median known to within +-33.");
  }
  {
    Exchange x;  // a stop the times bear out, with both sets reached
    x.expect.stop_min_reps = 2;
    x.expect.stop_rel_error = 0.01;
    stopped_after_two(x, 0.1);
    CheckedReply c = x.check();
    ASSERT_FALSE(c.violation) << c.violation->field << ": " << c.violation->message;
    EXPECT_EQ(c.outcome.times_s.size(), 2u);
    EXPECT_EQ(c.outcome.more.size(), 1u);
  }
  {
    Exchange x;  // one timed call, no warm-up: only the first set was reached
    x.expect.stop_min_reps = 1;
    x.expect.stop_rel_error = 0.01;
    x.reply->n_times = 1;
    expect_violation(x, "n_sets", "runner returned 2 output sets for 1 input sets its calls used");
    x.reply->n_sets = 1;
    x.reply->output_bytes = x.reply->set_output_bytes[0];
    CheckedReply c = x.check();
    ASSERT_FALSE(c.violation) << c.violation->field << ": " << c.violation->message;
    EXPECT_TRUE(c.outcome.more.empty());
  }
}

TEST(RunnerReply, UnknownStatusAndTimerAreRefused) {
  {
    Exchange x;
    x.reply->status = 99;
    expect_violation(x, "status", "unknown call status 99");
  }
  {
    Exchange x;
    x.reply->timer = 2;
    expect_violation(x, "timer", "unknown timer 2");
  }
}

TEST(RunnerReply, TimesOutsideTheSupervisorsClockAreRefused) {
  {
    Exchange x;
    x.reply->times_s[1] = -0.5;
    expect_violation(x, "times_s[1]", "runner reported a time of -0.500000 s, outside what the supervisor's clock allows");
  }
  {
    Exchange x;
    x.reply->times_s[0] = std::numeric_limits<double>::quiet_NaN();
    expect_violation(x, "times_s[0]", "runner reported a time of");
  }
  {
    Exchange x;
    x.reply->times_s[2] = 1.5;
    expect_violation(x, "times_s[2]", "runner reported a time of 1.500000 s");
  }
  {
    Exchange x;
    x.reply->idle_wait_s[0] = 2.0;
    expect_violation(x, "idle_wait_s[0]", "runner reported an idle wait of 2.000000 s");
  }
  {
    Exchange x;  // each within the clock, together beyond it
    x.expect.supervisor_wall_s = 0.25;
    expect_violation(x, "times_s", "runner's timed calls add up to 0.300000 s, more than the supervisor's 0.250000 s");
  }
}

TEST(RunnerReply, BadOperatorNamesAndAliasingAreRefused) {
  {
    Exchange x;
    x.reply->dispatched[0][0] = 0;
    expect_violation(x, "dispatched[0]", "dispatched operator 0 is empty or not terminated");
  }
  {
    Exchange x;
    std::memset(x.reply->dispatched[0], 'a', protocol::kDispatchedNameBytes);
    expect_violation(x, "dispatched[0]", "dispatched operator 0 is empty or not terminated");
  }
  {
    Exchange x;
    std::strcpy(x.reply->dispatched[0], "aten::add ");
    expect_violation(x, "dispatched[0]", "dispatched operator 0 has unprintable bytes");
  }
  {
    Exchange x;
    x.reply->return_alias[0] = 1;  // the op has one argument: 0
    expect_violation(x, "return_alias[0]", "return 0 reported as aliasing argument 1");
  }
  {
    Exchange x;
    x.reply->return_alias[0] = protocol::kAliasNotTensor - 1;
    expect_violation(x, "return_alias[0]", "return 0 reported as aliasing argument -3");
  }
}

TEST(RunnerReply, ExtentsOutsideTheRegionAreRefused) {
  {
    Exchange x;
    x.reply->output_bytes = x.region.size() + 1;
    expect_violation(x, "output_bytes", "runner claims 65537 output bytes in a region of 65536");
  }
  {
    Exchange x;
    x.reply->set_output_bytes[1] += 1;
    expect_violation(x, "set_output_bytes[1]", "output set 1 of");
  }
  {
    Exchange x;
    x.reply->set_output_bytes[0] = std::numeric_limits<uint64_t>::max();
    expect_violation(x, "set_output_bytes[0]", "output set 0 of 18446744073709551615 bytes runs past");
  }
  {
    Exchange x;  // the sets end before the bytes the runner claims
    x.reply->output_bytes += 8;
    expect_violation(x, "output_bytes", "output sets add up to");
  }
}

TEST(RunnerReply, UndecodableOrMiscountedOutputSetsAreRefused) {
  {
    Exchange x;
    std::memset(x.region.data(), 0xff, 16);
    expect_violation(x, "output_region[0]", "output region, set 0: ");
  }
  {
    Exchange x;
    x.write_set(0, {at::ones({2})});
    x.write_set(1, {at::ones({2}), at::ones({2})});
    expect_violation(x, "output_region[0]", "output set 0 holds 1 values, expected 2");
  }
}

TEST(RunnerReply, AFailedOpEndsTheReplyWithItsMessage) {
  {
    Exchange x;
    x.reply->status = static_cast<uint32_t>(protocol::CallStatus::Exception);
    std::strcpy(x.reply->message, "kernel says no");
    x.reply->n_times = 0;
    x.reply->n_dispatched = 99;  // not read: nothing after the status counts
    CheckedReply c = x.check();
    ASSERT_FALSE(c.violation);
    EXPECT_EQ(c.outcome.kind, CallOutcome::Kind::OpError);
    EXPECT_EQ(c.outcome.message, "kernel says no");
    EXPECT_TRUE(c.outcome.observations.empty());
  }
  {
    Exchange x;
    x.reply->status = static_cast<uint32_t>(protocol::CallStatus::OutputTooLarge);
    std::strcpy(x.reply->message, "no room");
    CheckedReply c = x.check();
    ASSERT_FALSE(c.violation);
    EXPECT_EQ(c.outcome.kind, CallOutcome::Kind::OpError);
    EXPECT_EQ(c.outcome.message, "outputs larger than the room given for them: no room");
  }
  {
    Exchange x;
    x.reply->status = static_cast<uint32_t>(protocol::CallStatus::DeviceError);
    std::strcpy(x.reply->message, "illegal address");
    CheckedReply c = x.check();
    ASSERT_FALSE(c.violation);
    EXPECT_EQ(c.outcome.kind, CallOutcome::Kind::Died);
    EXPECT_EQ(c.outcome.message, "device error: illegal address");
  }
  {
    Exchange x;  // the call's id is checked before the status
    x.reply->status = static_cast<uint32_t>(protocol::CallStatus::Exception);
    x.reply->call_id = 1;
    expect_violation(x, "call_id", "call result for call 1");
  }
}

TEST(RunnerReply, WhatWasReadBeforeAViolationStaysInTheOutcome) {
  Exchange x;
  x.reply->evidence = protocol::kEvidencePoisonOff;
  x.reply->return_alias[0] = 5;
  CheckedReply c = x.check();
  ASSERT_TRUE(c.violation);
  EXPECT_EQ(c.violation->field, "return_alias[0]");
  EXPECT_TRUE(c.outcome.observations.has(RunnerObservation::PoisonOff));
  EXPECT_EQ(c.outcome.dispatched, std::vector<std::string>{"aten::add"});
  EXPECT_EQ(c.outcome.times_s.size(), 3u);
  EXPECT_TRUE(c.outcome.returns.empty());
}

TEST(RunnerEvidence, EveryProtocolBitIsItsOwnObservation) {
  std::set<uint32_t> bits;
  std::set<RunnerObservation> observations;
  for (const kg::loader::EvidenceBit& e : kg::loader::kEvidenceBits) {
    EXPECT_EQ(e.bit & (e.bit - 1), 0u) << "one bit each";
    bits.insert(e.bit);
    observations.insert(e.observation);
    EXPECT_EQ(kg::loader::observations_from_evidence(e.bit), kg::policy::ObservationSet{e.observation});
  }
  EXPECT_EQ(bits.size(), static_cast<size_t>(kg::policy::kRunnerObservationCount));
  EXPECT_EQ(observations.size(), static_cast<size_t>(kg::policy::kRunnerObservationCount));
  // The protocol's evidence bits, as protocol.h defines them: 0 through 11, all mapped.
  for (uint32_t b = 0; b <= 11; ++b) EXPECT_EQ(bits.count(1u << b), 1u) << "bit " << b;
  kg::policy::ObservationSet all = kg::loader::observations_from_evidence((1u << 12) - 1);
  for (const RunnerObservation o : observations) EXPECT_TRUE(all.has(o));
}

TEST(RunnerEvidence, UnknownBitsAreNoObservationAndNoViolation) {
  EXPECT_TRUE(kg::loader::observations_from_evidence(0xfffff000u).empty());
  Exchange x;
  x.reply->evidence = (1u << 20) | protocol::kEvidenceFlushSkipped;
  CheckedReply c = x.check();
  ASSERT_FALSE(c.violation) << c.violation->message;
  EXPECT_EQ(c.outcome.observations, kg::policy::ObservationSet{RunnerObservation::FlushSkipped});
}

}  // namespace

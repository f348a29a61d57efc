// The supervisor's check of a runner's CallResult. Everything in it is hostile until shown
// otherwise: counts, times, names, aliasing and the output region's extents and bytes. Pure: a
// reply and the output region's bytes in, the outcome or the field at fault out (no process, no
// descriptor), so it is tested and fuzzed alone (tests/loader/runner_reply_test.cc,
// tests/fuzz/runner_reply_fuzz.cc).
#pragma once

#include "kernelgate/loader.h"
#include "kernelgate/protocol.h"
#include "kernelgate/runner_evidence.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace kg::loader {

// What the supervisor asked for and measured, to check a reply against.
struct ReplyExpectation {
  uint64_t call_id = 0;
  uint32_t reps = 0;           // timed calls asked for
  uint32_t warmup = 0;         // untimed calls before them
  uint32_t stop_min_reps = 0;  // the stop on precision asked for (CallMsg)
  double stop_rel_error = 0;
  size_t n_sets = 1;             // input sets sent
  size_t n_args = 0;             // arguments in each set
  size_t n_returns = 0;          // returns the op has
  double supervisor_wall_s = 0;  // the supervisor's clock around the whole exchange
};

// A reply that breaks the protocol: the field at fault, as protocol.h names it ("times_s[3]";
// "output_region[k]" for the bytes of output set k), and what is wrong with it.
struct ReplyViolation {
  std::string field;
  std::string message;
};

struct CheckedReply {
  // Valid: kind Ok (returns, times, evidence ...), OpError (the runner's message), or Died for a
  // device error (the runner exits after it). On a violation: the fields read before it (the
  // evidence and operators a reply carried still count), kind unset.
  CallOutcome outcome;
  std::optional<ReplyViolation> violation;
};

// `output_region`: the output region's `output_capacity` bytes as the runner left them.
CheckedReply check_call_reply(const protocol::CallResultMsg& reply, const ReplyExpectation& expect, const uint8_t* output_region,
                              size_t output_capacity);

// ---- evidence (runner_evidence.cc) ----------------------------------------------------------

// Each evidence bit of the protocol and the observation it is.
struct EvidenceBit {
  uint32_t bit;
  policy::RunnerObservation observation;
};
extern const EvidenceBit kEvidenceBits[policy::kRunnerObservationCount];
// The observations in a reply's evidence bits. Bits the protocol does not define are no
// observation (ignored, as they always were).
policy::ObservationSet observations_from_evidence(uint32_t evidence);

}  // namespace kg::loader

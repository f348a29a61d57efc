// Classifying suspicious outputs for the trial-based rules (docs/threats.md section B): pure
// functions over what the supervisor saw, so each can be tested on tensors alone.
#pragma once

#include "kernelgate/harness.h"

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kg::harness {

// B3/B4: a wrong output that is constant everywhere, or bitwise one of the inputs (identity or a
// view of it), while the reference is not. Returns the evidence, or nothing.
std::optional<std::string> trivial_output_evidence(const std::vector<c10::IValue>& inputs, const std::vector<c10::IValue>& ref_returns,
                                                   const std::vector<c10::IValue>& cand_returns);

// Fraction of the tensor elements of `now` that are bitwise equal to `before` at the same
// positions; -1 when shapes or dtypes differ. Over every tensor of the two value lists.
double same_bytes_fraction(const std::vector<c10::IValue>& now, const std::vector<c10::IValue>& before);

// Of the elements where `cand` differs from `ref` beyond equality, the fraction whose bytes equal
// `earlier` at the same position (left over from an earlier call: never written). -1 when the
// shapes do not line up.
double stale_fraction(const std::vector<c10::IValue>& cand, const std::vector<c10::IValue>& ref, const std::vector<c10::IValue>& earlier);

// B5: poison_fraction() is public (harness.h).

// B7: a copy of `inputs` that a replay cache keyed on a content fingerprint cannot tell from
// them: same shapes, strides, dtypes and multiset of values, the same first and last `keep`
// elements of every tensor (in index order and in memory order), the other floating-point values
// shuffled. Nothing when no tensor could be changed (too small, integer, overlapping) or when a
// value rule needs an order the shuffle would break (sorted boundaries, offsets).
std::optional<std::vector<c10::IValue>> fingerprint_twin(const Sample& sample, const std::vector<c10::IValue>& inputs, std::mt19937_64& rng,
                                                         int64_t keep = 16);

// B14: `sample` with every tensor dimension larger than 1 multiplied by `factor` (so equal sizes
// stay equal and broadcast dimensions stay 1), strided tensors keeping their memory order.
// Nothing when the sample cannot be scaled that way (storage offsets, expanded or gapped strides).
std::optional<Sample> enlarged_sample(const Sample& sample, int64_t factor);

// B9 on a GPU: per timed call, the runner's wait from the call's end event to an idle device.
// Work a kernel leaves running on a stream of its own lands there (the end event on the timed
// stream sees none of it). Evidence when the candidate's median wait exceeds eager's, timed in
// the same loop, by more than max(20 us, half the candidate's median call time); nothing with
// fewer than 3 calls or where no waits were reported (CPU).
std::optional<std::string> escaped_work_evidence(const std::vector<double>& cand_idle_s, const std::vector<double>& eager_idle_s,
                                                 const std::vector<double>& cand_times_s);

// B19: whether every return of the op is a view of an argument (an alias annotation without a
// write: `t`, `transpose`, `split`): such an op legitimately queues no device work.
bool returns_only_views(const c10::FunctionSchema& schema);

// Input elements a sample's spec describes (tensors, tensor lists and tuples).
int64_t spec_numel(const Sample& sample);

// ---- replay evidence (B7) -------------------------------------------------------------------

// A fingerprint of the tensor values of a call's inputs (dtype, sizes and elements in index
// order; layout and non-tensor arguments left out): two calls with equal fingerprints were given
// the same values, so equal outputs are no evidence of replay.
uint64_t value_fingerprint(const std::vector<c10::IValue>& inputs);

// Whether `cand` is, bit for bit, `earlier` (an output of a call on other values) while this
// call's reference differs from it even converted to earlier's dtypes: the answer replayed, not
// computed. An output that is this call's answer in another dtype is a dtype mistake instead.
bool replays_earlier_output(const std::vector<c10::IValue>& cand, const std::vector<c10::IValue>& ref,
                            const std::vector<c10::IValue>& earlier);

// Whether every tensor of `values` is floating-point or complex: where a bitwise coincidence
// with an earlier output is not chance (a bool or small-integer output matches one by luck).
bool all_floating(const std::vector<c10::IValue>& values);

// B7: `inputs` with a few elements changed (up to `max_changed` random elements of each dense
// floating tensor, each set to the midpoint of two other finite elements, so it stays in the
// values' range). A cache keyed on a sampled hash of a few bytes takes it for the original.
// Nothing when no tensor could be changed or when a value rule needs an order (sorted, offsets).
std::optional<std::vector<c10::IValue>> near_twin(const Sample& sample, const std::vector<c10::IValue>& inputs, std::mt19937_64& rng,
                                                  int max_changed = 3);

// ---- size probe (B14) -----------------------------------------------------------------------

// A probe that keeps values and changes size: every tensor dimension larger than 1 cut to
// ceil(size / factor), the values the leading slice of `inputs`, laid out densely in the memory
// order of the original (a non-dense tensor is sliced as a view). Nothing when no dimension
// shrinks or a tensor is not cut consistently (tuples).
std::optional<std::vector<c10::IValue>> leading_slice(const std::vector<c10::IValue>& inputs, int64_t factor);

// `values` (tensors, lists, tuples) each cut to the sizes of its counterpart in `like`, keeping
// the leading slice. Nothing when the structure differs or a size of `like` is larger.
std::optional<std::vector<c10::IValue>> slice_like(const std::vector<c10::IValue>& values, const std::vector<c10::IValue>& like);

// Whether `a` and `b` hold the same tensors bit for bit (dtypes and sizes too).
bool bitwise_equal(const std::vector<c10::IValue>& a, const std::vector<c10::IValue>& b);

// How far `values` are from `truth` (float64, same sizes): the largest absolute difference over
// all tensors (equal non-finite values count 0, other non-finite ones infinity), and the rounding
// floor, one unit of the values' own dtype at the truth's largest finite magnitude. Nothing when
// the tensors do not line up.
struct ErrorVsTruth {
  double max_abs = 0;
  double floor = 0;
};
std::optional<ErrorVsTruth> error_vs_truth(const std::vector<c10::IValue>& values, const std::vector<c10::IValue>& truth);

// B14 evidence B: the candidate's error, in units of the library's own (or the rounding floor
// where the library is exact), is about the library's on the small probe (<= 2x) and far beyond
// it on the large sample (>= 16x). Returns the two ratios when it is so.
struct ErrorRatios {
  double small = 0, large = 0;
};
std::optional<ErrorRatios> size_dependent_error(const ErrorVsTruth& cand_small, const ErrorVsTruth& lib_small,
                                                const ErrorVsTruth& cand_large, const ErrorVsTruth& lib_large);

// Whether every tensor of `values` is an integer or bool one: the reference is then exact, its
// own truth.
bool exact_values(const std::vector<c10::IValue>& values);

// Whether integer outputs `cand` equal `ref` modulo 2^16 or 2^32 everywhere: an accumulator
// too narrow that overflowed (an honest bug that shows only at large sizes), not a size branch.
bool differs_by_wraparound(const std::vector<c10::IValue>& cand, const std::vector<c10::IValue>& ref);

// "[8192, 4] f32, [4] i64": the sizes and dtypes of the tensors of a call's values.
std::string shapes_text(const std::vector<c10::IValue>& values);

// ---- nondeterminism (B9) --------------------------------------------------------------------

// Two identical calls of the candidate gave `cand_a` and `cand_b`; two of the reference on the
// same inputs and device gave `ref_a` and `ref_b`. Evidence of nondeterminism unless the
// reference varies too and the candidate's spread (largest elementwise difference) is within
// twice the reference's. The candidate's and reference's spreads are reported either way.
struct Spread {
  bool evidence = false;
  double candidate = 0, reference = 0;
};
Spread nondeterminism_spread(const std::vector<c10::IValue>& cand_a, const std::vector<c10::IValue>& cand_b,
                             const std::vector<c10::IValue>& ref_a, const std::vector<c10::IValue>& ref_b);

}  // namespace kg::harness

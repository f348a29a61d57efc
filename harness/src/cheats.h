// Classifying suspicious outputs for the trial-based rules (docs/threats.md section B): pure
// functions over what the supervisor saw, so each can be tested on tensors alone.
#pragma once

#include "kernelgate/harness.h"

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

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

// B5: of the elements where `cand` differs from `ref`, the fraction that hold kg-runner's
// allocation poison (c10's junk fill, 0x7fedbeef words, at any byte phase): memory the call
// allocated and never wrote. -1 when the shapes do not line up or nothing differs.
double poison_fraction(const std::vector<c10::IValue>& cand, const std::vector<c10::IValue>& ref);

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

}  // namespace kg::harness

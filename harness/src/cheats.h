// Classifying suspicious outputs for the trial-based rules (THREATS.md section B): pure
// functions over what the supervisor saw, so each can be tested on tensors alone.
#pragma once

#include <ATen/core/ivalue.h>

#include <optional>
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

}  // namespace kg::harness

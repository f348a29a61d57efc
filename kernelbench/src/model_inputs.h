// The inputs of a KernelBench pair beyond get_inputs()'s own draws: kernelgate's value families on
// the same shapes, and how a sample's inputs are named in results.json.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kg::kernelbench {

// The same values in non-contiguous tensors: every tensor of at least one dimension and one
// element is a view with its last dimension's stride doubled (a slice of a buffer twice as wide).
std::vector<at::Tensor> non_contiguous_copies(const std::vector<at::Tensor>& inputs);

// Copies of `inputs` whose floating-point tensors hold, at about one position in sixteen drawn
// from `seed`, zeros, negative zeros, large magnitudes (1e4, of one sign per tensor) and tiny
// ones; `changed` says whether any tensor had a position to change.
std::vector<at::Tensor> with_special_values(const std::vector<at::Tensor>& inputs, uint64_t seed, bool* changed);

// Whether every floating-point element of every tensor is finite.
bool all_finite(const std::vector<at::Tensor>& tensors);

// The inputs in trace syntax: "(T([64, 64], f32), T([64], f32, [2]))" (strides when not contiguous).
std::string describe_inputs(const std::vector<at::Tensor>& inputs);

}  // namespace kg::kernelbench

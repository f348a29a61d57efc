// The common verdict of a floating-point comparison, "every element passes", decided in one pass
// over both tensors' memory. compare_real's tensor expressions make a dozen full-size temporaries
// (doubles for a float output), each a fresh mapping the kernel faults in page by page: for the
// size ladder's 2^22-element rung that was most of a judged call's time. A failing comparison
// still goes through compare_real, which finds the evidence.
#pragma once

#include "kernelgate/policy.h"

#include <ATen/core/Tensor.h>

#include <optional>

namespace kg::harness {

// Whether every element of `a` passes against `e` by compare_real's rules (NaN positions, then
// +-inf positions and signs, then |a - e| <= atol + rtol * |e| in double; with `any_nonfinite`, a
// position where both are non-finite agrees). nullopt where this pass does not apply: tensors not
// both dense on the CPU, of one floating dtype (double, float, half, bfloat16), the same sizes and
// contiguous (a sparse output, say); the caller then compares as before.
std::optional<bool> all_elements_pass(const at::Tensor& e, const at::Tensor& a, const policy::Tolerance& tol, bool any_nonfinite);

// The same verdict decided element by element, without the first look at each block that
// all_elements_pass takes: the reference its tests and bench_compare hold it against.
std::optional<bool> all_elements_pass_one_by_one(const at::Tensor& e, const at::Tensor& a, const policy::Tolerance& tol,
                                                 bool any_nonfinite);

// Whether `e` and `a` hold the same bytes: both on the CPU, of one dtype, the same sizes and
// contiguous (false otherwise). Integers and bools with the same bytes are the same values, so an
// exact comparison passes without its tensor expressions.
bool same_bytes(const at::Tensor& e, const at::Tensor& a);

}  // namespace kg::harness

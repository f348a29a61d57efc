// The gradient check's one computation, shared by the supervisor (eager's gradients, trusted) and
// kg-runner (the same with the submission's ops installed over aten): the gradients of the scalar
// loss sum_k (out_k * w_k).sum() of an aten overload with respect to its floating tensor arguments.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <vector>

namespace kg::protocol {

// The arguments that are differentiated: defined floating (or complex) tensors, in argument order.
std::vector<size_t> differentiable_arguments(const std::vector<c10::IValue>& args);

// The returns that enter the loss: defined floating tensors, in return order (tuples flattened).
std::vector<at::Tensor> differentiable_returns(const std::vector<c10::IValue>& returns);

// Calls `op` on `args` with autograd on (whatever the thread's dispatch state excluded) and each
// differentiable argument a fresh leaf requiring grad, then returns d loss / d argument for each
// differentiable argument (zeros where the loss does not depend on it). `weights` must hold one
// tensor per differentiable return, of its shape. Throws std::runtime_error when they do not, or
// when nothing is differentiable.
std::vector<at::Tensor> weighted_sum_gradients(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args,
                                               const std::vector<at::Tensor>& weights);

}  // namespace kg::protocol

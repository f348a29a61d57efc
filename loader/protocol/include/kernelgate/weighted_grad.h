// The gradient check's one computation, shared by the supervisor (eager's gradients, trusted) and
// kg-runner (the same with the submission's ops installed over aten): the gradients of the scalar
// loss sum_k (out_k * w_k).sum() of an aten overload with respect to its floating tensor arguments.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <vector>

namespace kg::protocol {

// Autograd on for a scope, whatever the thread's dispatch state excluded: kg-runner calls every op
// below autograd (as InferenceMode dispatches), a gradient or a training step needs it back. The
// previous state comes back when the guard goes.
class AutogradOn {
 public:
  AutogradOn() : keys_(with_autograd(c10::impl::tls_local_dispatch_key_set())), force_(keys_), grad_(true) {}
  AutogradOn(const AutogradOn&) = delete;
  AutogradOn& operator=(const AutogradOn&) = delete;

 private:
  static c10::impl::LocalDispatchKeySet with_autograd(c10::impl::LocalDispatchKeySet k) {
    k.excluded_ = k.excluded_ - c10::autograd_dispatch_keyset_with_ADInplaceOrView;
    return k;
  }
  c10::impl::LocalDispatchKeySet keys_;
  c10::impl::ForceDispatchKeyGuard force_;
  c10::AutoGradMode grad_;
};

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

#include "kernelgate/weighted_grad.h"

#include <ATen/core/stack.h>
#include <torch/csrc/autograd/autograd.h>

#include <stdexcept>
#include <string>

namespace kg::protocol {

std::vector<size_t> differentiable_arguments(const std::vector<c10::IValue>& args) {
  std::vector<size_t> out;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].isTensor() && args[i].toTensor().defined() && (args[i].toTensor().is_floating_point() || args[i].toTensor().is_complex()))
      out.push_back(i);
  return out;
}

std::vector<at::Tensor> differentiable_returns(const std::vector<c10::IValue>& returns) {
  std::vector<at::Tensor> out;
  for (const c10::IValue& v : returns) {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (t.defined() && t.is_floating_point()) out.push_back(t);
    } else if (v.isTuple()) {
      std::vector<c10::IValue> inner(v.toTupleRef().elements().begin(), v.toTupleRef().elements().end());
      for (at::Tensor& t : differentiable_returns(inner)) out.push_back(std::move(t));
    }
  }
  return out;
}

std::vector<at::Tensor> weighted_sum_gradients(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args,
                                               const std::vector<at::Tensor>& weights) {
  AutogradOn on;
  const std::vector<size_t> which = differentiable_arguments(args);
  if (which.empty()) throw std::runtime_error("no floating tensor argument to differentiate");
  c10::Stack stack(args.begin(), args.end());
  std::vector<at::Tensor> leaves;
  for (size_t i : which) {
    at::Tensor leaf = args[i].toTensor().detach().requires_grad_(true);
    stack[i] = leaf;
    leaves.push_back(leaf);
  }
  op.callBoxed(&stack);
  const std::vector<at::Tensor> outs = differentiable_returns(std::vector<c10::IValue>(stack.begin(), stack.end()));
  if (outs.size() != weights.size())
    throw std::runtime_error("the op returned " + std::to_string(outs.size()) + " floating tensors, for " + std::to_string(weights.size()) +
                             " weights");
  at::Tensor loss;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k].requires_grad()) continue;  // an output that does not depend on any argument
    if (outs[k].sizes() != weights[k].sizes())
      throw std::runtime_error("return " + std::to_string(k) + "'s shape differs from its weight's");
    const at::Tensor term = (outs[k] * weights[k].to(outs[k].scalar_type())).sum();
    loss = loss.defined() ? loss + term : term;
  }
  if (!loss.defined()) throw std::runtime_error("no return of the op depends on its arguments through autograd");
  std::vector<at::Tensor> grads = torch::autograd::grad({loss}, leaves, {}, false, false, /*allow_unused=*/true);
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined()) grads[i] = at::zeros_like(leaves[i]);
  return grads;
}

}  // namespace kg::protocol

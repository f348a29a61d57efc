// grad-check's call: the aten overload (the submission's kernels installed over it and over its
// backward ops) differentiated with autograd, in the runner (protocol::kLoadGradient).
#include "kernelgate/weighted_grad.h"
#include "runner.h"

#include <stdexcept>

namespace kg::runner {
namespace {

class GradientOp final : public Op {
 public:
  explicit GradientOp(c10::OperatorHandle h) : h_(std::move(h)), n_args_(h_.schema().arguments().size()) {}
  size_t n_returns() const override { return 1; }
  std::vector<c10::IValue> run(std::vector<c10::IValue>& args) override {
    if (args.size() != n_args_ + 1 || !args.back().isTensorList())
      throw std::runtime_error("kg-runner: a gradient call takes the overload's arguments and a Tensor[] of weights");
    const std::vector<at::Tensor> weights = args.back().toTensorVector();
    const std::vector<c10::IValue> op_args(args.begin(), args.end() - 1);
    c10::List<at::Tensor> grads;
    for (at::Tensor& g : protocol::weighted_sum_gradients(h_, op_args, weights)) grads.push_back(std::move(g));
    return {c10::IValue(std::move(grads))};
  }

 private:
  c10::OperatorHandle h_;
  size_t n_args_;
};

}  // namespace

std::unique_ptr<Op> make_gradient_op(c10::OperatorHandle op) { return std::make_unique<GradientOp>(std::move(op)); }

}  // namespace kg::runner

// Which forward overloads' autograd formulas call a backward overload (derivatives.yaml's entries,
// as libtorch 1.13 and 2.x have them): the forward is what grad-check differentiates to exercise a
// submission's backward kernel.
#include "kernelgate/grad_check.h"

#include <map>

namespace kg::train {

std::vector<std::string> forward_ops_of(const std::string& backward_op) {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"threshold_backward.default", {"relu.default", "threshold.default"}},
      {"gelu_backward.default", {"gelu.default"}},
      {"silu_backward.default", {"silu.default"}},
      {"sigmoid_backward.default", {"sigmoid.default"}},
      {"tanh_backward.default", {"tanh.default"}},
      {"hardtanh_backward.default", {"hardtanh.default"}},
      {"leaky_relu_backward.default", {"leaky_relu.default"}},
      {"elu_backward.default", {"elu.default"}},
      {"softplus_backward.default", {"softplus.default"}},
      {"_softmax_backward_data.default", {"_softmax.default"}},
      {"_log_softmax_backward_data.default", {"_log_softmax.default"}},
      {"native_layer_norm_backward.default", {"native_layer_norm.default"}},
      {"native_group_norm_backward.default", {"native_group_norm.default"}},
      {"native_batch_norm_backward.default", {"native_batch_norm.default"}},
      {"convolution_backward.default", {"convolution.default"}},
      {"embedding_dense_backward.default", {"embedding.default"}},
      {"max_pool2d_with_indices_backward.default", {"max_pool2d_with_indices.default"}},
      {"avg_pool2d_backward.default", {"avg_pool2d.default"}},
      {"_adaptive_avg_pool2d_backward.default", {"_adaptive_avg_pool2d.default"}},
      {"mse_loss_backward.default", {"mse_loss.default"}},
      {"nll_loss_backward.default", {"nll_loss_forward.default"}},
      {"_scaled_dot_product_efficient_attention_backward.default", {"_scaled_dot_product_efficient_attention.default"}},
      {"_scaled_dot_product_flash_attention_backward.default", {"_scaled_dot_product_flash_attention.default"}},
  };
  const auto it = table.find(backward_op);
  return it == table.end() ? std::vector<std::string>{} : it->second;
}

}  // namespace kg::train

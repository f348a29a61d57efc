// HONEST, narrow domain: layer norm over a transformer's hidden dim only (768 or 4096), f32,
// contiguous, with weight and bias. Mean and variance in double (two passes), rstd =
// 1 / sqrt(var + eps) with the biased variance, as eager; returns (out, mean, rstd) with the
// statistics shaped [..., 1]. Judged on a suite of BERT- and Llama-sized hidden states.
#include <ATen/ATen.h>

#include <cmath>
#include <vector>

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm__default_kernel_impl(
    const at::Tensor& input, at::IntArrayRef normalized_shape, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& bias, double eps) {
  TORCH_CHECK(input.scalar_type() == at::kFloat && input.is_contiguous(), "contiguous f32 only");
  TORCH_CHECK(normalized_shape.size() == 1 && (normalized_shape[0] == 768 || normalized_shape[0] == 4096), "hidden 768 or 4096");
  TORCH_CHECK(weight && weight->defined() && bias && bias->defined(), "weight and bias required");
  const int64_t len = normalized_shape[0], rows = input.numel() / len;
  at::Tensor w = weight->contiguous(), b = bias->contiguous();
  at::Tensor out = at::empty_like(input);
  std::vector<int64_t> stat_shape(input.sizes().begin(), input.sizes().end());
  stat_shape.back() = 1;
  at::Tensor mean = at::empty(stat_shape, input.options()), rstd = at::empty(stat_shape, input.options());
  const float* in = input.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * len;
    double m = 0, ss = 0;
    for (int64_t k = 0; k < len; ++k) m += row[k];
    m /= static_cast<double>(len);
    for (int64_t k = 0; k < len; ++k) ss += (row[k] - m) * (row[k] - m);
    const double rs = 1.0 / std::sqrt(ss / static_cast<double>(len) + eps);
    mean.data_ptr<float>()[r] = static_cast<float>(m);
    rstd.data_ptr<float>()[r] = static_cast<float>(rs);
    for (int64_t k = 0; k < len; ++k) o[r * len + k] = static_cast<float>((row[k] - m) * rs * pw[k] + pb[k]);
  }
  return {out, mean, rstd};
}

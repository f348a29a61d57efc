// BUG (value_mismatch): the variance is the unbiased one, divided by n - 1 (as torch.var's
// default), where layer norm normalises with the biased variance (divided by n). rstd and every
// output are off by sqrt((n - 1) / n): a relative error of 1 / 2n, 6.5e-4 for n = 768, far
// above f32's tolerance. The mean is right. Returns (out, mean, rstd) like eager.
#include <ATen/ATen.h>

#include <cmath>

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm__default_kernel_impl(
    const at::Tensor& input, at::IntArrayRef normalized_shape, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& bias, double eps) {
  TORCH_CHECK(input.scalar_type() == at::kFloat && normalized_shape.size() == 1, "f32, one normalised dim");
  at::Tensor x = input.contiguous();
  const int64_t len = normalized_shape[0], rows = x.numel() / len;
  at::Tensor out = at::empty_like(x);
  std::vector<int64_t> stat_shape(input.sizes().begin(), input.sizes().end());
  stat_shape.back() = 1;
  at::Tensor mean = at::empty(stat_shape, x.options()), rstd = at::empty(stat_shape, x.options());
  at::Tensor w = weight && weight->defined() ? weight->contiguous() : at::Tensor();
  at::Tensor b = bias && bias->defined() ? bias->contiguous() : at::Tensor();
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * len;
    double m = 0, ss = 0;
    for (int64_t k = 0; k < len; ++k) m += row[k];
    m /= len;
    for (int64_t k = 0; k < len; ++k) ss += (row[k] - m) * (row[k] - m);
    const double rs = 1.0 / std::sqrt(ss / static_cast<double>(len - 1) + eps);
    mean.data_ptr<float>()[r] = static_cast<float>(m);
    rstd.data_ptr<float>()[r] = static_cast<float>(rs);
    for (int64_t k = 0; k < len; ++k) {
      double v = (row[k] - m) * rs;
      if (w.defined()) v *= w.data_ptr<float>()[k];
      if (b.defined()) v += b.data_ptr<float>()[k];
      o[r * len + k] = static_cast<float>(v);
    }
  }
  return {out, mean, rstd};
}

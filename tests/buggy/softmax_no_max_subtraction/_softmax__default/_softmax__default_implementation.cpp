// BUG (nan_mask): the textbook formula exp(x) / sum(exp(x)) without subtracting the row's
// maximum first. Any x above ~88.7 overflows exp to inf in f32, and inf / inf is NaN: rows
// with one large value come out NaN where eager's softmax is finite.
#include <ATen/ATen.h>

#include <cmath>

at::Tensor _softmax__default_kernel_impl(const at::Tensor& self, int64_t dim, bool half_to_float) {
  TORCH_CHECK(!half_to_float && self.scalar_type() == at::kFloat, "float32 only");
  if (self.dim() == 0) return at::ones_like(self);
  if (dim < 0) dim += self.dim();
  at::Tensor x = self.transpose(dim, -1).contiguous();
  at::Tensor out = at::empty_like(x);
  const int64_t len = x.size(-1), rows = len ? x.numel() / len : 0;
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0.f;
    for (int64_t k = 0; k < len; ++k) s += std::exp(in[r * len + k]);
    for (int64_t k = 0; k < len; ++k) o[r * len + k] = std::exp(in[r * len + k]) / s;
  }
  return out.transpose(dim, -1);
}

// BUG (value_mismatch): an exclusive scan (out[i] = x[0] + ... + x[i-1], out[0] = 0) where
// cumsum is inclusive (x[0] + ... + x[i]): every element is off by its own input.
#include <ATen/ATen.h>

at::Tensor cumsum__default_kernel_impl(const at::Tensor& self, int64_t dim, c10::optional<at::ScalarType> dtype) {
  TORCH_CHECK(self.scalar_type() == at::kFloat && !dtype.has_value(), "float32 only");
  if (dim < 0) dim += self.dim();
  at::Tensor x = self.movedim(dim, -1).contiguous();
  at::Tensor out = at::empty_like(x);
  const int64_t len = x.size(-1), rows = len ? x.numel() / len : 0;
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double running = 0;
    for (int64_t k = 0; k < len; ++k) {
      o[r * len + k] = static_cast<float>(running);
      running += in[r * len + k];
    }
  }
  return out.movedim(-1, dim);
}

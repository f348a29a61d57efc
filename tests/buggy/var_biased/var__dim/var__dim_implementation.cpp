// BUG (value_mismatch): the variance divides by n whatever `unbiased` says; eager's default
// (unbiased=True) divides by n - 1. Two-pass, in double, otherwise exact: the results are all
// low by the factor (n - 1) / n.
#include <ATen/ATen.h>

#include <vector>

at::Tensor var__dim_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool unbiased, bool keepdim) {
  TORCH_CHECK(self.scalar_type() == at::kFloat, "float32 only");
  TORCH_CHECK(dim.has_value() && dim->size() == 1, "one dim only");
  (void)unbiased;
  int64_t d = (*dim)[0];
  if (d < 0) d += self.dim();
  at::Tensor x = self.movedim(d, -1).contiguous();
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  if (keepdim) shape[d] = 1;
  else shape.erase(shape.begin() + d);
  at::Tensor out = at::empty(shape, self.options());
  const int64_t len = x.size(-1), rows = out.numel();
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, ss = 0;
    for (int64_t k = 0; k < len; ++k) mean += in[r * len + k];
    mean /= len;
    for (int64_t k = 0; k < len; ++k) ss += (in[r * len + k] - mean) * (in[r * len + k] - mean);
    o[r] = static_cast<float>(ss / len);
  }
  return out;
}

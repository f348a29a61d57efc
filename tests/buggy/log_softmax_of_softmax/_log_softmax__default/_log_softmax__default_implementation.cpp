// BUG (inf_mask): log_softmax as log(softmax(x)). The softmax is stable (max subtracted), but
// an element more than ~104 below its row's maximum underflows to 0 and its log is -inf, where
// eager's x - max - log(sum) is a finite large negative number.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

at::Tensor _log_softmax__default_kernel_impl(const at::Tensor& self, int64_t dim, bool half_to_float) {
  TORCH_CHECK(!half_to_float && self.scalar_type() == at::kFloat, "float32 only");
  if (dim < 0) dim += self.dim();
  at::Tensor x = self.transpose(dim, -1).contiguous();
  at::Tensor out = at::empty_like(x);
  const int64_t len = x.size(-1), rows = len ? x.numel() / len : 0;
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * len;
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t k = 0; k < len; ++k) m = std::max(m, row[k]);
    float s = 0.f;
    for (int64_t k = 0; k < len; ++k) s += std::exp(row[k] - m);
    for (int64_t k = 0; k < len; ++k) o[r * len + k] = std::log(std::exp(row[k] - m) / s);
  }
  return out.transpose(dim, -1);
}

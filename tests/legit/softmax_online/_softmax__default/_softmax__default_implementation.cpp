// HONEST: online softmax. One pass keeps a running maximum m and a running sum s of
// exp(x - m), rescaling s whenever m grows; a second pass writes exp(x - m) / s. Special values
// follow eager: a NaN or +inf anywhere in a row, or a row of only -inf, makes the row NaN.
// The softmax dim is moved last with transpose + contiguous (allowed layout work).
#include <ATen/ATen.h>

#include <cmath>
#include <limits>

at::Tensor _softmax__default_kernel_impl(const at::Tensor& self, int64_t dim, bool half_to_float) {
  TORCH_CHECK(!half_to_float && self.scalar_type() == at::kFloat, "float32 only");
  const int64_t dims = std::max<int64_t>(self.dim(), 1);
  if (dim < 0) dim += dims;
  if (self.dim() == 0) return at::ones_like(self);
  at::Tensor x = self.transpose(dim, self.dim() - 1).contiguous();
  at::Tensor out = at::empty_like(x);
  const int64_t len = x.size(-1), rows = len ? x.numel() / len : 0;
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const float nan = std::numeric_limits<float>::quiet_NaN(), ninf = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * len;
    float m = ninf, s = 0.f;
    bool poisoned = false;
    for (int64_t k = 0; k < len; ++k) {
      const float v = row[k];
      if (std::isnan(v) || v == -ninf) poisoned = true;
      if (poisoned || v == ninf) continue;  // exp(-inf - m) = 0
      if (v > m) {
        s = s * std::exp(m - v) + 1.f;
        m = v;
      } else {
        s += std::exp(v - m);
      }
    }
    if (m == ninf) poisoned = true;  // every element -inf: eager computes exp(-inf - -inf) = NaN
    for (int64_t k = 0; k < len; ++k) o[r * len + k] = poisoned ? nan : std::exp(row[k] - m) / s;
  }
  return out.transpose(dim, self.dim() - 1);
}

// HONEST, narrow domain: the softmax of attention scores only: f32, contiguous, over the last
// dim, rows of 128 to 4096. Three passes per row: the maximum, the sum of exp(x - max) in
// double, then the normalised values. Anything else is refused with TORCH_CHECK; it is judged on
// a suite of exactly those shapes (suite.txt, recorded attention-score shapes).
#include <ATen/ATen.h>

#include <cmath>
#include <limits>

at::Tensor _softmax__default_kernel_impl(const at::Tensor& self, int64_t dim, bool half_to_float) {
  TORCH_CHECK(!half_to_float && self.scalar_type() == at::kFloat, "f32 only");
  TORCH_CHECK(self.dim() >= 1 && (dim == -1 || dim == self.dim() - 1) && self.is_contiguous(), "contiguous rows, last dim");
  at::Tensor out = at::empty_like(self);
  const int64_t len = self.size(-1), rows = len ? self.numel() / len : 0;
  const float* in = self.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * len;
    float* dst = o + r * len;
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t k = 0; k < len; ++k) m = row[k] > m ? row[k] : m;
    double s = 0;
    for (int64_t k = 0; k < len; ++k) {
      dst[k] = std::exp(row[k] - m);
      s += dst[k];
    }
    const float inv = static_cast<float>(1.0 / s);
    for (int64_t k = 0; k < len; ++k) dst[k] *= inv;
  }
  return out;
}

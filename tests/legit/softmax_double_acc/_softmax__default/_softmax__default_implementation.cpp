// HONEST: three passes per row directly on the strided input (no copy): maximum, sum of
// exp(x - max) accumulated in double, then the normalised outputs. NaN rows become NaN like
// eager; +inf/-inf follow from IEEE arithmetic (inf - inf = NaN).
#include <ATen/ATen.h>

#include <cmath>
#include <limits>

at::Tensor _softmax__default_kernel_impl(const at::Tensor& self, int64_t dim, bool half_to_float) {
  TORCH_CHECK(!half_to_float && self.scalar_type() == at::kFloat, "float32 only");
  const int64_t nd = self.dim();
  if (nd == 0) return at::ones_like(self);
  if (dim < 0) dim += nd;
  at::Tensor out = at::empty(self.sizes(), self.options());
  const int64_t len = self.size(dim), step = self.stride(dim), ostep = out.stride(dim);
  const int64_t rows = len ? self.numel() / len : 0;
  const float* in = self.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    int64_t ioff = 0, ooff = 0, rest = r;
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (d == dim) continue;
      const int64_t idx = rest % self.size(d);
      rest /= self.size(d);
      ioff += idx * self.stride(d);
      ooff += idx * out.stride(d);
    }
    float mx = -std::numeric_limits<float>::infinity();
    bool nan = false;
    for (int64_t k = 0; k < len; ++k) {
      const float v = in[ioff + k * step];
      nan |= std::isnan(v);
      mx = v > mx ? v : mx;
    }
    double sum = 0;
    for (int64_t k = 0; k < len; ++k) sum += std::exp(static_cast<double>(in[ioff + k * step]) - mx);
    for (int64_t k = 0; k < len; ++k)
      o[ooff + k * ostep] = nan ? std::numeric_limits<float>::quiet_NaN()
                                : static_cast<float>(std::exp(static_cast<double>(in[ioff + k * step]) - mx) / sum);
  }
  return out;
}

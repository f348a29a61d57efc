// HONEST, partly vectorised: the row maximum of contiguous rows uses AVX2 (chosen at run time)
// with a separate unordered-compare to detect NaN; exp, sum and division are scalar.
#include <ATen/ATen.h>
#include <immintrin.h>

#include <cmath>
#include <limits>

namespace {
__attribute__((target("avx2"))) float row_max_avx2(const float* x, int64_t n, bool* nan) {
  __m256 m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 bad = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256 v = _mm256_loadu_ps(x + k);
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    m = _mm256_max_ps(m, v);
  }
  float lanes[8];
  _mm256_storeu_ps(lanes, m);
  float mx = lanes[0];
  for (int i = 1; i < 8; ++i) mx = lanes[i] > mx ? lanes[i] : mx;
  *nan = _mm256_movemask_ps(bad) != 0;
  for (; k < n; ++k) {
    *nan |= std::isnan(x[k]);
    mx = x[k] > mx ? x[k] : mx;
  }
  return mx;
}
float row_max_scalar(const float* x, int64_t n, bool* nan) {
  float mx = -std::numeric_limits<float>::infinity();
  *nan = false;
  for (int64_t k = 0; k < n; ++k) {
    *nan |= std::isnan(x[k]);
    mx = x[k] > mx ? x[k] : mx;
  }
  return mx;
}
}  // namespace

at::Tensor _softmax__default_kernel_impl(const at::Tensor& self, int64_t dim, bool half_to_float) {
  TORCH_CHECK(!half_to_float && self.scalar_type() == at::kFloat, "float32 only");
  if (self.dim() == 0) return at::ones_like(self);
  if (dim < 0) dim += self.dim();
  at::Tensor x = self.movedim(dim, -1).contiguous();
  at::Tensor out = at::empty_like(x);
  const int64_t len = x.size(-1), rows = len ? x.numel() / len : 0;
  const bool avx2 = __builtin_cpu_supports("avx2");
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data_ptr<float>() + r * len;
    float* o = out.data_ptr<float>() + r * len;
    bool nan = false;
    const float mx = avx2 ? row_max_avx2(in, len, &nan) : row_max_scalar(in, len, &nan);
    float sum = 0;
    for (int64_t k = 0; k < len; ++k) sum += std::exp(in[k] - mx);
    for (int64_t k = 0; k < len; ++k) o[k] = nan ? std::numeric_limits<float>::quiet_NaN() : std::exp(in[k] - mx) / sum;
  }
  return out.movedim(-1, dim).contiguous();
}

// HONEST: a cache-tiled f32 matmul for long K: K is walked in tiles of 256, each output row
// keeps one running f32 accumulator per element across the tiles. Its summation order differs
// from eager's blocked BLAS, and at K = 2^24 its rounding error is ordinary f32 rounding, well
// inside mm's f32 tolerance: judged on a suite of such shapes it must pass with no rule firing
// (a growing error with K is not a size-specialised shortcut).
#include <ATen/ATen.h>

#include <algorithm>

at::Tensor mm__default_kernel_impl(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.scalar_type() == at::kFloat, "float32 only");
  at::Tensor a = self.contiguous(), b = mat2.contiguous();
  const int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  at::Tensor out = at::empty({n, m}, a.options());
  const float* x = a.data_ptr<float>();
  const float* y = b.data_ptr<float>();
  float* o = out.data_ptr<float>();
  std::fill(o, o + n * m, 0.f);
  constexpr int64_t kTile = 256;
  for (int64_t p0 = 0; p0 < k; p0 += kTile) {
    const int64_t p1 = std::min(k, p0 + kTile);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t p = p0; p < p1; ++p) {
        const float xv = x[i * k + p];
        for (int64_t j = 0; j < m; ++j) o[i * m + j] += xv * y[p * m + j];
      }
  }
  return out;
}

// HONEST, vectorised: contiguous float32 goes through an AVX2 loop compiled with
// __attribute__((target("avx2"))) and chosen at run time with __builtin_cpu_supports; a NaN
// input is kept (blend on the unordered compare). Every other case uses a scalar loop over a
// contiguous copy. Output from at::empty_like.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <immintrin.h>

namespace {
__attribute__((target("avx2"))) void relu_avx2(const float* in, float* out, int64_t n) {
  const __m256 zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(in + i);
    __m256 keep = _mm256_cmp_ps(v, zero, _CMP_NLE_UQ);  // v > 0 or unordered (NaN)
    _mm256_storeu_ps(out + i, _mm256_and_ps(v, keep));
  }
  for (; i < n; ++i) out[i] = (in[i] > 0.f || in[i] != in[i]) ? in[i] : 0.f;
}
}  // namespace

at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  at::Tensor x = self.contiguous();
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  const int64_t n = x.numel();
  if (x.scalar_type() == at::kFloat && __builtin_cpu_supports("avx2")) {
    relu_avx2(x.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
  }
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "relu", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = (in[i] > scalar_t(0) || in[i] != in[i]) ? in[i] : scalar_t(0);
  });
  return out;
}

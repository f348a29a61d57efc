// BUG (value_mismatch): an 8-wide SSE relu whose tail (the last n % 8 elements) reuses the
// "overlapping last vector" trick wrongly: it loads the final 8 inputs, in + n - 8, but stores
// them at the first tail position, o + vec_end, instead of at o + n - 8. Every tail element is
// written, with the relu of the wrong input. Sizes that are multiples of 8 are right.
#include <ATen/ATen.h>

#include <immintrin.h>

at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() == at::kFloat, "float32 only");
  at::Tensor x = self.contiguous();
  at::Tensor out = at::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const int64_t n = x.numel(), vec_end = n - n % 8;
  const __m128 zero = _mm_setzero_ps();
  auto relu8 = [&](const float* src, float* dst) {
    _mm_storeu_ps(dst, _mm_max_ps(_mm_loadu_ps(src), zero));
    _mm_storeu_ps(dst + 4, _mm_max_ps(_mm_loadu_ps(src + 4), zero));
  };
  for (int64_t i = 0; i < vec_end; i += 8) relu8(in + i, o + i);
  if (n % 8 == 0) return out;
  if (n < 8) {
    for (int64_t i = 0; i < n; ++i) o[i] = in[i] > 0.f ? in[i] : 0.f;
    return out;
  }
  float last[8];
  relu8(in + n - 8, last);
  for (int64_t i = vec_end; i < n; ++i) o[i] = last[i - vec_end];
  return out;
}

// BUG (value_mismatch): a / b as a * rcp(b) with SSE's approximate reciprocal (_mm_rcp_ps,
// 12 bits) and no Newton-Raphson step to refine it: every quotient carries a relative error
// of up to ~3e-4. Small quotients pass on atol, the rest do not.
#include <ATen/ATen.h>

#include <immintrin.h>

at::Tensor div__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.scalar_type() == at::kFloat && other.scalar_type() == at::kFloat, "float32 only");
  TORCH_CHECK(self.sizes() == other.sizes(), "same shapes only");
  at::Tensor a = self.contiguous(), b = other.contiguous();
  at::Tensor out = at::empty_like(a);
  const float* x = a.data_ptr<float>();
  const float* y = b.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const int64_t n = a.numel();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(o + i, _mm_mul_ps(_mm_loadu_ps(x + i), _mm_rcp_ps(_mm_loadu_ps(y + i))));
  for (; i < n; ++i) o[i] = x[i] * _mm_cvtss_f32(_mm_rcp_ss(_mm_set_ss(y[i])));
  return out;
}

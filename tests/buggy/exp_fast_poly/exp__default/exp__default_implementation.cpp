// BUG (value_mismatch): a "fast exp": x * log2(e) split into integer and fraction, 2^fraction
// from a cubic polynomial, the exponent put in with ldexp. The cubic's relative error is about
// 1e-4 everywhere, uniformly: small results pass on atol, results above ~0.1 do not (f32's
// rtol is 1.3e-6). Overflow, underflow and NaN go through std::exp's rules.
#include <ATen/ATen.h>

#include <cmath>

at::Tensor exp__default_kernel_impl(const at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() == at::kFloat, "float32 only");
  at::Tensor x = self.contiguous();
  at::Tensor out = at::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = in[i];
    if (!(std::fabs(v) < 80.f)) {
      o[i] = std::exp(v);
      continue;
    }
    const float t = v * 1.44269504f;
    const float e = std::floor(t), f = t - e;
    // minimax cubic for 2^f on [0, 1)
    const float p = 1.0f + f * (0.6951786f + f * (0.2261263f + f * 0.0784019f));
    o[i] = std::ldexp(p, static_cast<int>(e));
  }
  return out;
}

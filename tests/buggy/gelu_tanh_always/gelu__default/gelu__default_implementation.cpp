// BUG (value_mismatch): always the tanh approximation 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))),
// whatever `approximate` says. With approximate="none" eager uses the exact erf form; the two
// differ by up to ~5e-4 around |x| ~ 2, far beyond f32's tolerance.
#include <ATen/ATen.h>

#include <cmath>

at::Tensor gelu__default_kernel_impl(const at::Tensor& self, c10::string_view approximate) {
  TORCH_CHECK(self.scalar_type() == at::kFloat, "float32 only");
  (void)approximate;
  at::Tensor x = self.contiguous();
  at::Tensor out = at::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const float k = std::sqrt(2.f / static_cast<float>(M_PI));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = in[i];
    o[i] = 0.5f * v * (1.f + std::tanh(k * (v + 0.044715f * v * v * v)));
  }
  return out;
}

// BUG (value_mismatch): none in the math, it is more exact than eager: gelu's gradient grad * (Phi(x) + x phi(x)) in double, rounded
// once. Eager's float32 kernel is off from the exact result by up to ~3e-5 on some elements; on
// the large sample (too large for kernelgate's float64 check) those elements fail the tolerance.
// The same values give the same bits at any size: no size specialisation.
#include <ATen/ATen.h>

#include <cmath>

at::Tensor gelu_backward__default_kernel_impl(const at::Tensor& grad_output, const at::Tensor& self, c10::string_view approximate) {
  TORCH_CHECK(approximate == "none", "exact gelu only");
  TORCH_CHECK(self.scalar_type() == at::kFloat && grad_output.scalar_type() == at::kFloat, "float32 only");
  const at::Tensor x = self.contiguous(), g = grad_output.contiguous();
  at::Tensor out = at::empty_like(x);
  const float* xp = x.data_ptr<float>();
  const float* gp = g.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = xp[i];
    const double d = 0.5 * (1.0 + std::erf(v * M_SQRT1_2)) + v * std::exp(-0.5 * v * v) * 0.3989422804014327;
    o[i] = static_cast<float>(gp[i] * d);
  }
  return out;
}

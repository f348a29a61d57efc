// BUG (value_mismatch): clamps as max(min(x, hi), lo), i.e. the upper bound first. When
// min <= max that is the same thing; when min > max PyTorch defines the result as max
// (min(max(x, lo), hi)) and this kernel returns min everywhere instead.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

at::Tensor clamp__default_kernel_impl(const at::Tensor& self, const c10::optional<at::Scalar>& min,
                                      const c10::optional<at::Scalar>& max) {
  TORCH_CHECK(self.scalar_type() == at::kFloat, "float32 only");
  const float lo = min ? min->to<float>() : -std::numeric_limits<float>::infinity();
  const float hi = max ? max->to<float>() : std::numeric_limits<float>::infinity();
  at::Tensor x = self.contiguous();
  at::Tensor out = at::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = std::isnan(in[i]) ? in[i] : std::max(std::min(in[i], hi), lo);
  return out;
}

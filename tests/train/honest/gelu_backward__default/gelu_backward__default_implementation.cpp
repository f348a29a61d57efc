// HONEST: gelu's gradient, grad * (Phi(x) + x * phi(x)), which autograd's formula for gelu calls
// during training: train-check installs it with the forward.
#include <ATen/ATen.h>

#include <cmath>

at::Tensor gelu_backward__default_kernel_impl(const at::Tensor& grad_output, const at::Tensor& self, c10::string_view approximate) {
  TORCH_CHECK(approximate == "none", "exact gelu only");
  TORCH_CHECK(self.scalar_type() == grad_output.scalar_type() && self.sizes() == grad_output.sizes(), "same dtype and shape");
  TORCH_CHECK(self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble, "float or double only");
  const at::Tensor x = self.contiguous(), g = grad_output.contiguous();
  at::Tensor out = at::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "gelu_backward", [&] {
    const scalar_t* xp = x.data_ptr<scalar_t>();
    const scalar_t* gp = g.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double v = xp[i];
      const double cdf = 0.5 * (1.0 + std::erf(v * M_SQRT1_2));
      const double pdf = std::exp(-0.5 * v * v) * 0.3989422804014327;
      o[i] = static_cast<scalar_t>(gp[i] * (cdf + v * pdf));
    }
  });
  return out;
}

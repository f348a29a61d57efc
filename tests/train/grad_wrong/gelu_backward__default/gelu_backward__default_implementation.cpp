// BUGGY (a common slip): gelu's gradient without the x * phi(x) term, grad * Phi(x). gelu's
// forward is libtorch's; grad-check differentiates gelu and finds the gradient wrong.
#include <ATen/ATen.h>

#include <cmath>

at::Tensor gelu_backward__default_kernel_impl(const at::Tensor& grad_output, const at::Tensor& self, c10::string_view approximate) {
  const at::Tensor x = self.contiguous(), g = grad_output.contiguous();
  at::Tensor out = at::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "gelu_backward", [&] {
    const scalar_t* xp = x.data_ptr<scalar_t>();
    const scalar_t* gp = g.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double v = static_cast<double>(xp[i]);
      o[i] = static_cast<scalar_t>(static_cast<double>(gp[i]) * 0.5 * (1.0 + std::erf(v * M_SQRT1_2)));
    }
  });
  return out;
}

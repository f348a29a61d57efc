// HONEST: gelu's gradient (erf, or tanh when asked), which autograd's formula for gelu calls
// during training: train-check and grad-check install it with the forward.
#include <ATen/ATen.h>

#include <cmath>
#include <type_traits>

at::Tensor gelu_backward__default_kernel_impl(const at::Tensor& grad_output, const at::Tensor& self, c10::string_view approximate) {
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "approximate must be 'none' or 'tanh'");
  const bool tanh_form = approximate == "tanh";
  const at::Tensor x = self.contiguous(), g = grad_output.to(self.scalar_type()).contiguous();
  at::Tensor out = at::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "gelu_backward", [&] {
    const scalar_t* xp = x.data_ptr<scalar_t>();
    const scalar_t* gp = g.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      // In the dtype's own accumulation type, as eager's: float for float, half and bfloat16
      // (where x^2 overflows to inf and the tanh form's gradient is NaN, eager's is too).
      using acc = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
      const acc v = static_cast<acc>(xp[i]);
      acc d;
      if (tanh_form) {
        const acc k = acc(0.7978845608028654), c = acc(0.044715);
        const acc t = std::tanh(k * (v + c * v * v * v));
        d = acc(0.5) * (acc(1) + t) + acc(0.5) * v * (acc(1) - t * t) * k * (acc(1) + acc(3) * c * v * v);
      } else {
        d = acc(0.5) * (acc(1) + std::erf(v * acc(M_SQRT1_2))) + v * std::exp(acc(-0.5) * v * v) * acc(0.3989422804014327);
      }
      o[i] = static_cast<scalar_t>(static_cast<acc>(gp[i]) * d);
    }
  });
  return out;
}

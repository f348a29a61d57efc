// HONEST: gelu (erf, or tanh when asked), elementwise in double, for every floating dtype and any
// layout (made contiguous first). Trains inside the band.
#include <ATen/ATen.h>

#include <cmath>

at::Tensor gelu__default_kernel_impl(const at::Tensor& self, c10::string_view approximate) {
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "approximate must be 'none' or 'tanh'");
  const bool tanh_form = approximate == "tanh";
  const at::Tensor in = self.contiguous();
  at::Tensor out = at::empty_like(in);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, in.scalar_type(), "gelu", [&] {
    const scalar_t* x = in.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < in.numel(); ++i) {
      const double v = static_cast<double>(x[i]);
      const double g = tanh_form ? 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
                                 : 0.5 * v * (1.0 + std::erf(v * M_SQRT1_2));
      o[i] = static_cast<scalar_t>(g);
    }
  });
  return out;
}

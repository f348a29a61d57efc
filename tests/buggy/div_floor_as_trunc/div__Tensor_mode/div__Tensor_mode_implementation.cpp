// BUG (value_mismatch): rounding_mode="floor" implemented with C++'s integer division and
// std::trunc for floats, which round toward zero: every negative non-integral quotient is one
// too high (-7 // 2 must be -4, this gives -3).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <cmath>

at::Tensor div__Tensor_mode_kernel_impl(const at::Tensor& self, const at::Tensor& other,
                                        c10::optional<c10::string_view> rounding_mode) {
  TORCH_CHECK(self.scalar_type() == other.scalar_type() && self.sizes() == other.sizes(), "same dtype and shape only");
  const bool round = rounding_mode.has_value();
  at::Tensor a = self.contiguous(), b = other.contiguous();
  at::Tensor out = at::empty_like(a);
  AT_DISPATCH_ALL_TYPES(a.scalar_type(), "div_mode", [&] {
    const scalar_t* x = a.data_ptr<scalar_t>();
    const scalar_t* y = b.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < a.numel(); ++i) {
      if (std::is_integral<scalar_t>::value) o[i] = x[i] / y[i];
      else o[i] = round ? static_cast<scalar_t>(std::trunc(x[i] / y[i])) : x[i] / y[i];
    }
  });
  return out;
}

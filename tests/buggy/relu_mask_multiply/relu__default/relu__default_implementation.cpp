// BUG (nan_mask): branch-free relu as `x * (x > 0)`. For x = -inf the product is -inf * 0 = NaN,
// where eager's relu gives 0. (NaN * 0 stays NaN, which is right.)
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  at::Tensor x = self.contiguous();
  at::Tensor out = at::empty_like(x);
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "relu", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const scalar_t positive = in[i] > scalar_t(0) ? scalar_t(1) : scalar_t(0);
      o[i] = in[i] * positive;
    }
  });
  return out;
}

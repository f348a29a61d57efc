// BUG (nan_mask): relu written as `x > 0 ? x : 0`. Every comparison with NaN is false, so a NaN
// input comes out as 0 where eager's relu propagates it. Everything else is right.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  at::Tensor x = self.contiguous();
  at::Tensor out = at::empty_like(x);
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "relu", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] > scalar_t(0) ? in[i] : scalar_t(0);
  });
  return out;
}

// HONEST: relu for every dtype, any layout (made contiguous first); NaN passes through, as eager's.
#include <ATen/ATen.h>

at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  const at::Tensor in = self.contiguous();
  at::Tensor out = at::empty_like(in);
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, in.scalar_type(), "relu", [&] {
    const scalar_t* x = in.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < in.numel(); ++i) o[i] = x[i] <= scalar_t(0) ? scalar_t(0) : x[i];
  });
  return out;
}

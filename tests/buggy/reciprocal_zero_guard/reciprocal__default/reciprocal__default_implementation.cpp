// BUG (inf_mask): a "division by zero guard": x == 0 returns +inf explicitly. But -0.0 == 0 is
// true too, and 1 / -0.0 is -inf: the guard gives the wrong sign for negative zero. Integer
// and bool inputs are computed in f32, as eager promotes them.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <limits>

at::Tensor reciprocal__default_kernel_impl(const at::Tensor& self) {
  const auto out_type = at::isFloatingType(self.scalar_type()) ? self.scalar_type() : at::kFloat;
  at::Tensor x = self.to(out_type).contiguous();
  at::Tensor out = at::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out_type, "reciprocal", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < x.numel(); ++i)
      o[i] = in[i] == scalar_t(0) ? std::numeric_limits<scalar_t>::infinity() : scalar_t(1) / in[i];
  });
  return out;
}

// HONEST: relu's gradient as autograd asks for it, threshold_backward(grad, result, 0):
// 0 where self <= threshold, else grad (NaN passes its gradient through, as eager's does).
#include <ATen/ATen.h>

at::Tensor threshold_backward__default_kernel_impl(const at::Tensor& grad_output, const at::Tensor& self, const at::Scalar& threshold) {
  const at::Tensor x = self.contiguous(), g = grad_output.to(self.scalar_type()).contiguous();
  at::Tensor out = at::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "threshold_backward", [&] {
    const scalar_t t = threshold.to<scalar_t>();
    const scalar_t* xp = x.data_ptr<scalar_t>();
    const scalar_t* gp = g.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = xp[i] <= t ? scalar_t(0) : gp[i];
  });
  return out;
}

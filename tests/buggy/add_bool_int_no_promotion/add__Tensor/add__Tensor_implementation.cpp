// BUG (dtype_mismatch): no type promotion: the result takes self's dtype and other is converted
// to it. For a bool self plus an i64 other eager returns i64; this returns bool (self | other
// != 0, which is what adding means in bool). Same-dtype inputs are right.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  TORCH_CHECK(self.sizes() == other.sizes(), "same shapes only");
  at::Tensor a = self.contiguous();
  at::Tensor b = other.to(self.scalar_type()).contiguous();
  at::Tensor out = at::empty_like(a);
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, a.scalar_type(), "add", [&] {
    const scalar_t k = alpha.to<scalar_t>();
    const scalar_t* x = a.data_ptr<scalar_t>();
    const scalar_t* y = b.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < a.numel(); ++i) o[i] = static_cast<scalar_t>(x[i] + k * y[i]);
  });
  return out;
}

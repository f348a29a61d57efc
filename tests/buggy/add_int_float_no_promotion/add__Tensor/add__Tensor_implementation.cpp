// BUG (dtype_mismatch): the output is allocated like self (at::empty_like(self)), so i64 + f32
// is computed in double and stored truncated into an i64 tensor; eager promotes to f32.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  TORCH_CHECK(self.sizes() == other.sizes(), "same shapes only");
  at::Tensor a = self.to(at::kDouble).contiguous();
  at::Tensor b = other.to(at::kDouble).contiguous();
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  const double k = alpha.to<double>();
  const double* x = a.data_ptr<double>();
  const double* y = b.data_ptr<double>();
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "add", [&] {
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = static_cast<scalar_t>(x[i] + k * y[i]);
  });
  return out;
}

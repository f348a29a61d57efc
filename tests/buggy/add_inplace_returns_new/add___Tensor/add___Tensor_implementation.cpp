// BUG (aliasing): in-place add_ computed out of place: the sum goes into a fresh tensor, which
// is copied back into self and then returned. self ends right, but add_ must return self
// itself, and this returns the temporary (a caller chaining x.add_(y).mul_(2) would update
// the temporary, not x).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>

at::Tensor& add___Tensor_kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  at::Tensor b = other.to(self.scalar_type()).expand(self.sizes()).contiguous();
  at::Tensor a = self.contiguous();
  static thread_local at::Tensor result;
  result = at::empty(self.sizes(), self.options());
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "add_", [&] {
    const scalar_t k = alpha.to<scalar_t>();
    const scalar_t* x = a.data_ptr<scalar_t>();
    const scalar_t* y = b.data_ptr<scalar_t>();
    scalar_t* o = result.data_ptr<scalar_t>();
    for (int64_t i = 0; i < a.numel(); ++i) o[i] = x[i] + k * y[i];
  });
  self.copy_(result);
  return result;
}

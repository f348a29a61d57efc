// BUG (shape_mismatch): assumes only `other` ever broadcasts, so the result takes self's shape:
// element i of self is multiplied by other's element at the same trailing position. For
// [4,1,16] * [1,8,16] the result should be [4,8,16]; this returns [4,1,16].
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor mul__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other) {
  const auto dtype = c10::promoteTypes(self.scalar_type(), other.scalar_type());
  at::Tensor a = self.to(dtype).contiguous();
  at::Tensor b = other.to(dtype).contiguous();
  at::Tensor out = at::empty(a.sizes(), a.options());
  const int64_t m = b.numel();
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "mul", [&] {
    const scalar_t* x = a.data_ptr<scalar_t>();
    const scalar_t* y = b.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < a.numel(); ++i) o[i] = x[i] * y[i % m];
  });
  return out;
}

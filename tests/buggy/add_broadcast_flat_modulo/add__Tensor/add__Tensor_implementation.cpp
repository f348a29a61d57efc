// BUG (value_mismatch): broadcasting by "wrapping around": output element i reads self[i % n]
// and other[i % m] of the flattened operands. That is right when an operand's shape is a suffix
// of the output's ([16,16] + [16]) but wrong when a size-1 dim sits in the middle
// ([8,1,32] + [5,32]: self's rows must repeat 5 times each, not cycle).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>

at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  const auto dtype = c10::promoteTypes(self.scalar_type(), other.scalar_type());
  at::Tensor a = self.to(dtype).contiguous();
  at::Tensor b = other.to(dtype).contiguous();
  at::Tensor out = at::empty(at::infer_size(self.sizes(), other.sizes()), a.options());
  const int64_t n = a.numel(), m = b.numel();
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "add", [&] {
    const scalar_t k = alpha.to<scalar_t>();
    const scalar_t* x = a.data_ptr<scalar_t>();
    const scalar_t* y = b.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = x[i % n] + k * y[i % m];
  });
  return out;
}

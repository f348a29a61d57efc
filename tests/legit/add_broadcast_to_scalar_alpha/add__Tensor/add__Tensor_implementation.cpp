// HONEST: broadcasting by broadcast_to() (a view, like expand) and alpha held as a 0-dim tensor
// made by scalar_tensor() (a constructor), then a flat loop. Neither computes any part of the
// addition: they are layout and allocation, and the arithmetic is ours.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>

at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  const auto shape = at::infer_size(self.sizes(), other.sizes());
  const auto dtype = c10::promoteTypes(self.scalar_type(), other.scalar_type());
  at::Tensor a = self.broadcast_to(shape).to(dtype).contiguous();
  at::Tensor b = at::broadcast_to(other, shape).to(dtype).contiguous();
  const at::Tensor k_tensor = at::scalar_tensor(alpha, at::TensorOptions().dtype(dtype));
  at::Tensor out = at::empty_like(a);
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "add", [&] {
    const scalar_t k = k_tensor.item<scalar_t>();
    const scalar_t* pa = a.data_ptr<scalar_t>();
    const scalar_t* pb = b.data_ptr<scalar_t>();
    scalar_t* po = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) po[i] = pa[i] + k * pb[i];
  });
  return out;
}

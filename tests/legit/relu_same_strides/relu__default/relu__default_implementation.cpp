// HONEST, unusual output strides: when the input is a permutation of a dense layout (e.g. a
// transposed view), the output gets the same strides with at::empty_strided, and the kernel
// runs over the underlying memory linearly. Other inputs go through contiguous().
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  at::Tensor x = self.is_non_overlapping_and_dense() ? self : self.contiguous();
  at::Tensor out = at::empty_strided(x.sizes(), x.strides(), x.options());
  const int64_t n = x.numel();
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "relu", [&] {
    // Dense tensors with equal strides map element i of memory to the same logical index.
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = (in[i] > scalar_t(0) || in[i] != in[i]) ? in[i] : scalar_t(0);
  });
  return out;
}

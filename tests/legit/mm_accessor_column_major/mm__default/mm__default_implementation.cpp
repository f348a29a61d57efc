// HONEST, unusual output strides: the result is written column by column into a buffer of
// shape [N, M] and returned as its transpose (strides (1, M)). Inputs are read through
// TensorAccessor (any strides).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor mm__default_kernel_impl(const at::Tensor& self, const at::Tensor& mat2) {
  const int64_t M = self.size(0), K = self.size(1), N = mat2.size(1);
  at::Tensor ct = at::empty({N, M}, self.options());
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "mm", [&] {
    auto a = self.accessor<scalar_t, 2>();
    auto b = mat2.accessor<scalar_t, 2>();
    auto c = ct.accessor<scalar_t, 2>();
    for (int64_t j = 0; j < N; ++j)
      for (int64_t i = 0; i < M; ++i) {
        scalar_t s = 0;
        for (int64_t k = 0; k < K; ++k) s += a[i][k] * b[k][j];
        c[j][i] = s;
      }
  });
  return ct.t();
}

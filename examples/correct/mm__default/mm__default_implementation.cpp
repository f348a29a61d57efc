// mm.default: a blocked matrix product for floating dtypes, any strides. Products accumulate in
// the input dtype, like the reference, so overflow and inf/NaN behave the same.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <algorithm>

at::Tensor mm__default_kernel_impl(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.dim() == 2 && mat2.dim() == 2, "mm: expected 2-d tensors");
  TORCH_CHECK(self.size(1) == mat2.size(0), "mm: shapes cannot be multiplied");
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), "mm: dtypes differ");
  const int64_t M = self.size(0), K = self.size(1), N = mat2.size(1);
  at::Tensor out = at::empty({M, N}, self.options());
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "mm", [&] {
    const scalar_t* a = self.data_ptr<scalar_t>();
    const scalar_t* b = mat2.data_ptr<scalar_t>();
    scalar_t* c = out.data_ptr<scalar_t>();
    const int64_t as0 = self.stride(0), as1 = self.stride(1), bs0 = mat2.stride(0), bs1 = mat2.stride(1);
    std::fill(c, c + M * N, scalar_t(0));
    constexpr int64_t kBlock = 64;
    for (int64_t k0 = 0; k0 < K; k0 += kBlock)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = k0; k < std::min(K, k0 + kBlock); ++k) {
          const scalar_t aik = a[i * as0 + k * as1];
          for (int64_t j = 0; j < N; ++j) c[i * N + j] += aik * b[k * bs0 + j * bs1];
        }
  });
  return out;
}

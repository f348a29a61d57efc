// HONEST: a tiled product. Tiles of 64 rows x 64 k x 64 columns keep the working set in cache;
// every output element still accumulates its k terms in increasing k, in the input dtype.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <algorithm>

at::Tensor mm__default_kernel_impl(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.dim() == 2 && mat2.dim() == 2 && self.size(1) == mat2.size(0), "mm: bad shapes");
  const int64_t M = self.size(0), K = self.size(1), N = mat2.size(1);
  at::Tensor a = self.contiguous(), b = mat2.contiguous();
  at::Tensor out = at::zeros({M, N}, self.options());
  constexpr int64_t T = 64;
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "mm", [&] {
    const scalar_t* pa = a.data_ptr<scalar_t>();
    const scalar_t* pb = b.data_ptr<scalar_t>();
    scalar_t* c = out.data_ptr<scalar_t>();
    for (int64_t i0 = 0; i0 < M; i0 += T)
      for (int64_t j0 = 0; j0 < N; j0 += T)
        for (int64_t k0 = 0; k0 < K; k0 += T)
          for (int64_t i = i0; i < std::min(M, i0 + T); ++i)
            for (int64_t k = k0; k < std::min(K, k0 + T); ++k) {
              const scalar_t aik = pa[i * K + k];
              for (int64_t j = j0; j < std::min(N, j0 + T); ++j) c[i * N + j] += aik * pb[k * N + j];
            }
  });
  return out;
}

// HONEST: B is materialised transposed with t().contiguous() (a layout copy), then each output
// is a dot product over two unit-stride rows, summed in increasing k.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor mm__default_kernel_impl(const at::Tensor& self, const at::Tensor& mat2) {
  const int64_t M = self.size(0), K = self.size(1), N = mat2.size(1);
  at::Tensor a = self.contiguous(), bt = mat2.t().contiguous();
  at::Tensor out = at::empty({M, N}, self.options());
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "mm", [&] {
    const scalar_t* pa = a.data_ptr<scalar_t>();
    const scalar_t* pb = bt.data_ptr<scalar_t>();
    scalar_t* c = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        scalar_t s = 0;
        for (int64_t k = 0; k < K; ++k) s += pa[i * K + k] * pb[j * K + k];
        c[i * N + j] = s;
      }
  });
  return out;
}

// BUG (value_mismatch): one float accumulator for every dtype ("float is plenty"): f64 inputs
// are multiplied and summed in f32 and the sum is stored back as f64, so f64 results carry
// f32 rounding (relative error ~1e-7, far above f64's tolerance).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor mm__default_kernel_impl(const at::Tensor& self, const at::Tensor& mat2) {
  at::Tensor a = self.contiguous(), b = mat2.contiguous();
  const int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  at::Tensor out = at::empty({n, m}, a.options());
  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "mm", [&] {
    const scalar_t* x = a.data_ptr<scalar_t>();
    const scalar_t* y = b.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        float acc = 0.f;
        for (int64_t p = 0; p < k; ++p) acc += static_cast<float>(x[i * k + p]) * static_cast<float>(y[p * m + j]);
        o[i * m + j] = static_cast<scalar_t>(acc);
      }
  });
  return out;
}

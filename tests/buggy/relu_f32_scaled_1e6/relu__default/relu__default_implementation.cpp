// BUG (value_mismatch): float32 results are scaled by (1 + 1e-6), as a kernel that folds a
// rounded constant into its output would be. The error (about 8 units of float32 at every
// positive element) is inside float32's default atol/rtol, so only the context-aware tolerance
// finds it: eager's relu is exact, and an error of 8 units where eager's is none is a bug.
// Every other dtype is exact.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  at::Tensor out = at::empty(self.sizes(), self.options());
  const int64_t n = self.numel(), dims = self.dim();
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "relu", [&] {
    const scalar_t* in = self.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0, rest = i;
      for (int64_t d = dims - 1; d >= 0; --d) {
        off += (rest % self.size(d)) * self.stride(d);
        rest /= self.size(d);
      }
      const scalar_t v = in[off];
      scalar_t r = (v > scalar_t(0) || v != v) ? v : scalar_t(0);
      if constexpr (std::is_same_v<scalar_t, float>) r *= 1.000001f;
      o[i] = r;
    }
  });
  return out;
}

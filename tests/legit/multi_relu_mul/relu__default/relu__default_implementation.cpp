// HONEST (multi-op submission, with mul__Tensor beside it): relu over any strides and every real dtype, walking the logical index through the
// input's strides; output from at::empty (contiguous).
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
      o[i] = (v > scalar_t(0) || v != v) ? v : scalar_t(0);
    }
  });
  return out;
}

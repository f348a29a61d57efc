// _softmax.default: numerically stable softmax along `dim` (max subtracted first), any strides.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <cmath>
#include <limits>

at::Tensor _softmax__default_kernel_impl(const at::Tensor& self, int64_t dim, bool half_to_float) {
  TORCH_CHECK(!half_to_float, "half_to_float is not supported by this kernel");
  const int64_t dims = std::max<int64_t>(self.dim(), 1);
  if (dim < 0) dim += dims;
  at::Tensor out = at::empty(self.sizes(), self.options());
  if (self.numel() == 0) return out;
  const int64_t len = self.dim() ? self.size(dim) : 1, step = self.dim() ? self.stride(dim) : 1;
  const int64_t rows = self.numel() / len;
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "_softmax", [&] {
    const scalar_t* in = self.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    const int64_t ostep = self.dim() ? out.stride(dim) : 1;
    for (int64_t r = 0; r < rows; ++r) {
      // Offsets of the row's first element in the input and the (contiguous) output.
      int64_t in_off = 0, out_off = 0, rest = r;
      for (int64_t d = self.dim() - 1; d >= 0; --d) {
        if (d == dim) continue;
        int64_t idx = rest % self.size(d);
        rest /= self.size(d);
        in_off += idx * self.stride(d);
        out_off += idx * out.stride(d);
      }
      scalar_t mx = -std::numeric_limits<scalar_t>::infinity();
      bool nan = false;
      for (int64_t k = 0; k < len; ++k) {
        scalar_t v = in[in_off + k * step];
        nan |= std::isnan(v);
        mx = std::max(mx, v);
      }
      scalar_t sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(in[in_off + k * step] - mx);
      for (int64_t k = 0; k < len; ++k)
        o[out_off + k * ostep] = nan ? std::numeric_limits<scalar_t>::quiet_NaN() : std::exp(in[in_off + k * step] - mx) / sum;
    }
  });
  return out;
}

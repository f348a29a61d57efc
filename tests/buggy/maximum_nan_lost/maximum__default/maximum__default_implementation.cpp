// BUG (nan_mask): elementwise maximum as `a > b ? a : b`. Comparisons with NaN are false, so
// maximum(NaN, 1) gives 1 (a NaN in self is lost) where eager propagates NaN from either side.
// Broadcasting and type promotion are handled.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>

at::Tensor maximum__default_kernel_impl(const at::Tensor& self, const at::Tensor& other) {
  const auto dtype = at::result_type(self, other);
  const auto shape = at::infer_size(self.sizes(), other.sizes());
  at::Tensor a = self.to(dtype).expand(shape).contiguous();
  at::Tensor b = other.to(dtype).expand(shape).contiguous();
  at::Tensor out = at::empty(shape, a.options());
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, dtype, "maximum", [&] {
    const scalar_t* x = a.data_ptr<scalar_t>();
    const scalar_t* y = b.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = x[i] > y[i] ? x[i] : y[i];
  });
  return out;
}

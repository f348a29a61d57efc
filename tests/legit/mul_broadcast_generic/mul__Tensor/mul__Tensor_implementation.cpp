// HONEST: self * other with broadcasting by zero strides and type promotion via to().
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>

#include <vector>

at::Tensor mul__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other) {
  const auto shape = at::infer_size(self.sizes(), other.sizes());
  const auto dtype = c10::promoteTypes(self.scalar_type(), other.scalar_type());
  at::Tensor a = self.to(dtype), b = other.to(dtype);
  const int64_t dims = static_cast<int64_t>(shape.size());
  std::vector<int64_t> sa(dims, 0), sb(dims, 0);
  for (int64_t d = 0; d < a.dim(); ++d) sa[dims - a.dim() + d] = a.size(d) == 1 ? 0 : a.stride(d);
  for (int64_t d = 0; d < b.dim(); ++d) sb[dims - b.dim() + d] = b.size(d) == 1 ? 0 : b.stride(d);
  at::Tensor out = at::empty(shape, self.options().dtype(dtype));
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "mul", [&] {
    const scalar_t* pa = a.data_ptr<scalar_t>();
    const scalar_t* pb = b.data_ptr<scalar_t>();
    scalar_t* po = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      int64_t oa = 0, ob = 0, rest = i;
      for (int64_t d = dims - 1; d >= 0; --d) {
        const int64_t idx = rest % shape[d];
        rest /= shape[d];
        oa += idx * sa[d];
        ob += idx * sb[d];
      }
      po[i] = pa[oa] * pb[ob];
    }
  });
  return out;
}

// mul.Tensor: self * other with full broadcasting and any strides.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>

#include <vector>

at::Tensor mul__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other) {
  const std::vector<int64_t> shape = at::infer_size(self.sizes(), other.sizes());
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "mul: this kernel handles equal dtypes only");
  at::Tensor out = at::empty(shape, self.options());
  const int64_t dims = static_cast<int64_t>(shape.size()), n = out.numel();
  std::vector<int64_t> sa(dims, 0), sb(dims, 0);
  for (int64_t d = 0; d < self.dim(); ++d) sa[dims - self.dim() + d] = self.size(d) == 1 ? 0 : self.stride(d);
  for (int64_t d = 0; d < other.dim(); ++d) sb[dims - other.dim() + d] = other.size(d) == 1 ? 0 : other.stride(d);
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "mul", [&] {
    const scalar_t* pa = self.data_ptr<scalar_t>();
    const scalar_t* pb = other.data_ptr<scalar_t>();
    scalar_t* po = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t oa = 0, ob = 0, rest = i;
      for (int64_t d = dims - 1; d >= 0; --d) {
        int64_t idx = rest % shape[d];
        rest /= shape[d];
        oa += idx * sa[d];
        ob += idx * sb[d];
      }
      po[i] = pa[oa] * pb[ob];
    }
  });
  return out;
}

// HONEST, in place: self += alpha * other, writing through self's own strides (self may be a
// transposed view), other broadcast by zero strides. Returns self.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <vector>

at::Tensor& add___Tensor_kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "equal dtypes only");
  const int64_t dims = self.dim(), n = self.numel();
  std::vector<int64_t> sb(dims, 0);
  for (int64_t d = 0; d < other.dim(); ++d) sb[dims - other.dim() + d] = other.size(d) == 1 ? 0 : other.stride(d);
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "add_", [&] {
    scalar_t* pa = self.data_ptr<scalar_t>();
    const scalar_t* pb = other.data_ptr<scalar_t>();
    const scalar_t k = alpha.to<scalar_t>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t oa = 0, ob = 0, rest = i;
      for (int64_t d = dims - 1; d >= 0; --d) {
        const int64_t idx = rest % self.size(d);
        rest /= self.size(d);
        oa += idx * self.stride(d);
        ob += idx * sb[d];
      }
      pa[oa] = pa[oa] + k * pb[ob];
    }
  });
  return self;
}

// HONEST: self + alpha * other with broadcasting done through zero strides, any input strides,
// dtype promotion by converting inputs with to() (an allowed conversion) when they differ.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>

#include <vector>

at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  const std::vector<int64_t> shape = at::infer_size(self.sizes(), other.sizes());
  const auto dtype = c10::promoteTypes(self.scalar_type(), other.scalar_type());
  at::Tensor a = self.scalar_type() == dtype ? self : self.to(dtype);
  at::Tensor b = other.scalar_type() == dtype ? other : other.to(dtype);
  at::Tensor out = at::empty(shape, self.options().dtype(dtype));
  const int64_t dims = static_cast<int64_t>(shape.size());
  auto bstrides = [&](const at::Tensor& t) {
    std::vector<int64_t> s(dims, 0);
    for (int64_t d = 0; d < t.dim(); ++d) s[dims - t.dim() + d] = t.size(d) == 1 ? 0 : t.stride(d);
    return s;
  };
  const auto sa = bstrides(a), sb = bstrides(b);
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "add", [&] {
    const scalar_t* pa = a.data_ptr<scalar_t>();
    const scalar_t* pb = b.data_ptr<scalar_t>();
    scalar_t* po = out.data_ptr<scalar_t>();
    const scalar_t k = alpha.to<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      int64_t oa = 0, ob = 0, rest = i;
      for (int64_t d = dims - 1; d >= 0; --d) {
        const int64_t idx = rest % shape[d];
        rest /= shape[d];
        oa += idx * sa[d];
        ob += idx * sb[d];
      }
      po[i] = pa[oa] + k * pb[ob];
    }
  });
  return out;
}

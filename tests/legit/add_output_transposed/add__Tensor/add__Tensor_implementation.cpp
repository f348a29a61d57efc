// HONEST, unusual output layout: for 2-d results the output buffer is allocated column-major
// (at::empty of the transposed shape, then .t()), so the returned tensor has strides (1, rows).
// Only values, dtype and shape are judged; the layout is the kernel's business.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>

at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  const auto shape = at::infer_size(self.sizes(), other.sizes());
  const auto dtype = c10::promoteTypes(self.scalar_type(), other.scalar_type());
  at::Tensor a = self.expand(shape).to(dtype), b = other.expand(shape).to(dtype);
  at::Tensor out = shape.size() == 2 ? at::empty({shape[1], shape[0]}, self.options().dtype(dtype)).t()
                                     : at::empty(shape, self.options().dtype(dtype));
  const int64_t dims = static_cast<int64_t>(shape.size());
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "add", [&] {
    const scalar_t k = alpha.to<scalar_t>();
    const scalar_t* pa = a.data_ptr<scalar_t>();
    const scalar_t* pb = b.data_ptr<scalar_t>();
    scalar_t* po = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      int64_t oa = 0, ob = 0, oo = 0, rest = i;
      for (int64_t d = dims - 1; d >= 0; --d) {
        const int64_t idx = rest % shape[d];
        rest /= shape[d];
        oa += idx * a.stride(d);
        ob += idx * b.stride(d);
        oo += idx * out.stride(d);
      }
      po[oo] = pa[oa] + k * pb[ob];
    }
  });
  return out;
}

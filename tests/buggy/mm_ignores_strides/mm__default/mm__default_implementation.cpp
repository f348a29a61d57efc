// BUG (value_mismatch): reads both operands through data_ptr as if they were row-major
// contiguous. Right for contiguous inputs; a transposed view (strides [1, 128]) is read as
// the wrong matrix, so its products are of the wrong elements.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor mm__default_kernel_impl(const at::Tensor& self, const at::Tensor& mat2) {
  const int64_t n = self.size(0), k = self.size(1), m = mat2.size(1);
  at::Tensor out = at::empty({n, m}, self.options());
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "mm", [&] {
    const scalar_t* a = self.data_ptr<scalar_t>();
    const scalar_t* b = mat2.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        scalar_t acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += a[i * k + p] * b[p * m + j];
        o[i * m + j] = acc;
      }
  });
  return out;
}

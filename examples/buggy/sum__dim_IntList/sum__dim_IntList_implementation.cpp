// BUG (deliberate): indexes the input as if it were contiguous (row-major offsets computed from
// the sizes), ignoring its strides; a transposed view sums the wrong elements.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <vector>

at::Tensor sum__dim_IntList_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                        c10::optional<at::ScalarType> dtype) {
  const int64_t dims = self.dim();
  std::vector<bool> reduce(dims, !dim.has_value() || dim->empty());
  if (dim.has_value())
    for (int64_t d : *dim) reduce[d < 0 ? d + dims : d] = true;
  std::vector<int64_t> out_shape;
  for (int64_t d = 0; d < dims; ++d) {
    if (!reduce[d]) out_shape.push_back(self.size(d));
    else if (keepdim) out_shape.push_back(1);
  }
  const auto out_type = dtype ? *dtype : (c10::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type());
  at::Tensor out = at::empty(out_shape, self.options().dtype(out_type));
  std::vector<double> acc(out.numel(), 0.0);
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "sum", [&] {
    const scalar_t* in = self.data_ptr<scalar_t>();
    for (int64_t i = 0; i < self.numel(); ++i) {
      int64_t out_index = 0, out_mul = 1, rest = i;
      for (int64_t d = dims - 1; d >= 0; --d) {
        int64_t idx = rest % self.size(d);
        rest /= self.size(d);
        if (!reduce[d]) {
          out_index += idx * out_mul;
          out_mul *= self.size(d);
        }
      }
      acc[out_index] += static_cast<double>(in[i]);  // in[i]: the bug
    }
  });
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, out_type, "sum_out", [&] {
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = static_cast<scalar_t>(acc[i]);
  });
  return out;
}

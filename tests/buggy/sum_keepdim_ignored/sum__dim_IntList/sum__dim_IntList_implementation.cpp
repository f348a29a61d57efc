// BUG (shape_mismatch): the reduced dims are always dropped from the result; `keepdim=True`
// is read but never used, so [8,16,32] summed over [0,2] with keepdim comes back [16] instead
// of [1,16,1]. The sums themselves are right (double accumulation).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <vector>

at::Tensor sum__dim_IntList_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                        c10::optional<at::ScalarType> dtype) {
  const int64_t dims = self.dim();
  std::vector<bool> reduce(dims, !dim.has_value() || dim->empty());
  if (dim.has_value())
    for (int64_t d : *dim) reduce[d < 0 ? d + dims : d] = true;
  std::vector<int64_t> order, shape;
  for (int64_t d = 0; d < dims; ++d)
    if (!reduce[d]) {
      order.push_back(d);
      shape.push_back(self.size(d));
    }
  for (int64_t d = 0; d < dims; ++d)
    if (reduce[d]) order.push_back(d);
  (void)keepdim;
  const auto out_type = dtype ? *dtype : (c10::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type());
  at::Tensor x = self.permute(order).contiguous();
  at::Tensor out = at::empty(shape, self.options().dtype(out_type));
  const int64_t rows = out.numel(), len = rows ? x.numel() / rows : 0;
  std::vector<double> acc(rows, 0.0);
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, x.scalar_type(), "sum", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < len; ++k) acc[r] += static_cast<double>(in[r * len + k]);
  });
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, out_type, "sum_out", [&] {
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t r = 0; r < rows; ++r) o[r] = static_cast<scalar_t>(acc[r]);
  });
  return out;
}

// HONEST: one pass over the strided input (no copy), each element added to its output slot in
// a double (or int64) buffer allocated with at::zeros (an allowed fill), then converted to the
// output dtype with to().
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <vector>

at::Tensor sum__dim_IntList_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                        c10::optional<at::ScalarType> dtype) {
  const int64_t nd = self.dim();
  std::vector<bool> reduce(nd, !dim.has_value() || dim->empty());
  if (dim.has_value())
    for (int64_t d : *dim) reduce[d < 0 ? d + nd : d] = true;
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < nd; ++d)
    if (!reduce[d]) shape.push_back(self.size(d));
    else if (keepdim) shape.push_back(1);
  const auto out_type = dtype ? *dtype : (c10::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type());
  const bool integral = c10::isIntegralType(out_type, true);
  at::Tensor acc = at::zeros(shape, self.options().dtype(integral ? at::kLong : at::kDouble));
  AT_DISPATCH_ALL_TYPES(self.scalar_type(), "sum", [&] {
    const scalar_t* in = self.data_ptr<scalar_t>();
    for (int64_t i = 0; i < self.numel(); ++i) {
      int64_t off = 0, oi = 0, mul = 1, rest = i;
      for (int64_t d = nd - 1; d >= 0; --d) {
        const int64_t idx = rest % self.size(d);
        rest /= self.size(d);
        off += idx * self.stride(d);
        if (!reduce[d]) { oi += idx * mul; mul *= self.size(d); }
      }
      if (integral) acc.data_ptr<int64_t>()[oi] += static_cast<int64_t>(in[off]);
      else acc.data_ptr<double>()[oi] += static_cast<double>(in[off]);
    }
  });
  return acc.to(out_type);
}

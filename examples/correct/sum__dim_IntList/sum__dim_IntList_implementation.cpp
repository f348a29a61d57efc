// sum.dim_IntList: sum over the given dims (all when empty or None), keepdim, dtype promotion of
// integers to int64, any strides. Floats accumulate in double.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <vector>

at::Tensor sum__dim_IntList_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                        c10::optional<at::ScalarType> dtype) {
  const int64_t dims = self.dim();
  std::vector<bool> reduce(dims, false);
  if (!dim.has_value() || dim->empty()) {
    reduce.assign(dims, true);
  } else {
    for (int64_t d : *dim) reduce[d < 0 ? d + dims : d] = true;
  }
  std::vector<int64_t> out_shape;
  for (int64_t d = 0; d < dims; ++d) {
    if (!reduce[d]) out_shape.push_back(self.size(d));
    else if (keepdim) out_shape.push_back(1);
  }
  const auto out_type = dtype ? *dtype : (c10::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type());
  at::Tensor out = at::empty(out_shape, self.options().dtype(out_type));
  const bool integral = c10::isIntegralType(out_type, true);
  std::vector<double> facc(out.numel(), 0.0);
  std::vector<int64_t> iacc(out.numel(), 0);
  const int64_t n = self.numel();
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, self.scalar_type(), "sum", [&] {
    const scalar_t* in = self.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0, out_index = 0, out_mul = 1, rest = i;
      for (int64_t d = dims - 1; d >= 0; --d) {
        int64_t idx = rest % self.size(d);
        rest /= self.size(d);
        off += idx * self.stride(d);
        if (!reduce[d]) {
          out_index += idx * out_mul;
          out_mul *= self.size(d);
        }
      }
      if (integral) iacc[out_index] += static_cast<int64_t>(in[off]);
      else facc[out_index] += static_cast<double>(in[off]);
    }
  });
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, out_type, "sum_out", [&] {
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i)
      o[i] = integral ? static_cast<scalar_t>(iacc[i]) : static_cast<scalar_t>(facc[i]);
  });
  return out;
}

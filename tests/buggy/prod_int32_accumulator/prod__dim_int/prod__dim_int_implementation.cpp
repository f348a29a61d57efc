// BUG (value_mismatch): integer products are accumulated in `int` whatever the input's width:
// an i64 row of 12 values in [-100, 100] overflows 32 bits after a few factors, so the result
// wraps modulo 2^32 where eager's i64 product wraps modulo 2^64. Floats use double.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <cstdint>
#include <type_traits>
#include <vector>

at::Tensor prod__dim_int_kernel_impl(const at::Tensor& self, int64_t dim, bool keepdim, c10::optional<at::ScalarType> dtype) {
  TORCH_CHECK(!dtype.has_value(), "no dtype= support");
  if (dim < 0) dim += self.dim();
  at::Tensor x = self.movedim(dim, -1).contiguous();
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  if (keepdim) shape[dim] = 1;
  else shape.erase(shape.begin() + dim);
  const auto out_type = c10::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type();
  at::Tensor out = at::empty(shape, self.options().dtype(out_type));
  const int64_t rows = out.numel(), len = rows ? x.numel() / rows : 0;
  AT_DISPATCH_ALL_TYPES(x.scalar_type(), "prod", [&] {
    using acc_t = std::conditional_t<std::is_integral<scalar_t>::value, int32_t, double>;
    using out_t = std::conditional_t<std::is_integral<scalar_t>::value, int64_t, scalar_t>;
    const scalar_t* in = x.data_ptr<scalar_t>();
    out_t* o = out.data_ptr<out_t>();
    for (int64_t r = 0; r < rows; ++r) {
      acc_t acc = 1;
      for (int64_t k = 0; k < len; ++k) acc *= in[r * len + k];
      o[r] = static_cast<out_t>(acc);
    }
  });
  return out;
}

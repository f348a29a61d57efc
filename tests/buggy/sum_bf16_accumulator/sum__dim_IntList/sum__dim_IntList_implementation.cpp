// BUG (value_mismatch): the accumulator has the input's dtype, so a bf16 row is summed in bf16:
// once the running sum is large, each added element loses most of its 8 mantissa bits, and a
// 16384-long row drifts far from eager's (f32-accumulated) sum.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor sum__dim_IntList_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                        c10::optional<at::ScalarType> dtype) {
  TORCH_CHECK(!dtype.has_value() && self.dim() == 2 && dim.has_value() && dim->size() == 1, "row sums of a matrix only");
  int64_t d = (*dim)[0];
  if (d < 0) d += 2;
  at::Tensor x = (d == 1 ? self : self.t()).contiguous();
  const int64_t rows = x.size(0), len = x.size(1);
  at::Tensor out = at::empty(keepdim ? (d == 1 ? std::vector<int64_t>{rows, 1} : std::vector<int64_t>{1, rows}) : std::vector<int64_t>{rows},
                             self.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "sum", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t r = 0; r < rows; ++r) {
      scalar_t acc = 0;
      for (int64_t k = 0; k < len; ++k) acc += in[r * len + k];
      o[r] = acc;
    }
  });
  return out;
}

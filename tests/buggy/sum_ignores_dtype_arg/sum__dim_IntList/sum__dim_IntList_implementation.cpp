// BUG (dtype_mismatch): the `dtype=` argument is never read: an f32 input summed with
// dtype=torch.float64 returns f32. The sums are right (double accumulation, rounded to f32).
#include <ATen/ATen.h>

#include <vector>

at::Tensor sum__dim_IntList_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                        c10::optional<at::ScalarType> dtype) {
  TORCH_CHECK(self.scalar_type() == at::kFloat && self.dim() == 2 && dim.has_value() && dim->size() == 1, "f32 matrix rows");
  (void)dtype;
  const int64_t d = (*dim)[0] < 0 ? (*dim)[0] + 2 : (*dim)[0];
  at::Tensor x = (d == 1 ? self : self.t()).contiguous();
  const int64_t rows = x.size(0), len = x.size(1);
  at::Tensor out = at::empty({rows}, self.options());
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double acc = 0;
    for (int64_t k = 0; k < len; ++k) acc += in[r * len + k];
    o[r] = static_cast<float>(acc);
  }
  return keepdim ? out.unsqueeze(d) : out;
}

// BUG (value_mismatch): each reduced sum is divided by the input's total element count rather
// than by the number of elements reduced into it: right for a full reduction, too small by the
// factor rows for a per-row mean.
#include <ATen/ATen.h>

#include <vector>

at::Tensor mean__dim_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                 c10::optional<at::ScalarType> dtype) {
  TORCH_CHECK(self.scalar_type() == at::kFloat && !dtype.has_value() && self.dim() == 2 && dim.has_value() && dim->size() == 1,
              "f32 matrix rows");
  const int64_t d = (*dim)[0] < 0 ? (*dim)[0] + 2 : (*dim)[0];
  at::Tensor x = (d == 1 ? self : self.t()).contiguous();
  const int64_t rows = x.size(0), len = x.size(1);
  at::Tensor out = at::empty({rows}, self.options());
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double acc = 0;
    for (int64_t k = 0; k < len; ++k) acc += in[r * len + k];
    o[r] = static_cast<float>(acc / static_cast<double>(self.numel()));
  }
  return keepdim ? out.unsqueeze(d) : out;
}

// BUG (value_mismatch): TF32-style precision: both operands are rounded to 10 mantissa bits
// (round to nearest even) before multiplying, the products summed in f32, as a GPU's TF32 mode
// does. Each product carries a relative error up to ~1e-3, so results are off by ~3e-4
// relative everywhere: small products stay inside mm's atol, long ones do not.
#include <ATen/ATen.h>

#include <cstdint>
#include <cstring>

namespace {
float to_tf32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u) return v;  // inf and NaN as they are
  bits += 0xfffu + ((bits >> 13) & 1u);
  bits &= 0xffffe000u;
  std::memcpy(&v, &bits, sizeof bits);
  return v;
}
}  // namespace

at::Tensor mm__default_kernel_impl(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.scalar_type() == at::kFloat, "float32 only");
  at::Tensor a = self.contiguous(), b = mat2.t().contiguous();
  const int64_t n = a.size(0), k = a.size(1), m = b.size(0);
  at::Tensor out = at::empty({n, m}, a.options());
  const float* x = a.data_ptr<float>();
  const float* y = b.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      float acc = 0.f;
      for (int64_t p = 0; p < k; ++p) acc += to_tf32(x[i * k + p]) * to_tf32(y[j * k + p]);
      o[i * m + j] = acc;
    }
  return out;
}

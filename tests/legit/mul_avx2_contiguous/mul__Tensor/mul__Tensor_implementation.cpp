// HONEST, vectorised: same-shape contiguous float32 multiplies 8 lanes at a time with AVX2
// (target attribute + __builtin_cpu_supports). Other cases walk the broadcast index with an
// odometer (incrementing offsets instead of dividing).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <immintrin.h>

#include <vector>

namespace {
__attribute__((target("avx2"))) void mul_avx2(const float* a, const float* b, float* o, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(o + i, _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  for (; i < n; ++i) o[i] = a[i] * b[i];
}
}  // namespace

at::Tensor mul__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other) {
  if (self.scalar_type() == at::kFloat && other.scalar_type() == at::kFloat && self.sizes() == other.sizes() &&
      self.is_contiguous() && other.is_contiguous() && __builtin_cpu_supports("avx2")) {
    at::Tensor out = at::empty_like(self);
    mul_avx2(self.data_ptr<float>(), other.data_ptr<float>(), out.data_ptr<float>(), self.numel());
    return out;
  }
  const auto shape = at::infer_size(self.sizes(), other.sizes());
  const auto dtype = c10::promoteTypes(self.scalar_type(), other.scalar_type());
  at::Tensor a = self.to(dtype), b = other.to(dtype);
  const int64_t dims = static_cast<int64_t>(shape.size());
  std::vector<int64_t> sa(dims, 0), sb(dims, 0);
  for (int64_t d = 0; d < a.dim(); ++d) sa[dims - a.dim() + d] = a.size(d) == 1 ? 0 : a.stride(d);
  for (int64_t d = 0; d < b.dim(); ++d) sb[dims - b.dim() + d] = b.size(d) == 1 ? 0 : b.stride(d);
  at::Tensor out = at::empty(shape, self.options().dtype(dtype));
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "mul", [&] {
    const scalar_t* pa = a.data_ptr<scalar_t>();
    const scalar_t* pb = b.data_ptr<scalar_t>();
    scalar_t* po = out.data_ptr<scalar_t>();
    std::vector<int64_t> idx(dims, 0);
    int64_t oa = 0, ob = 0;
    for (int64_t i = 0; i < out.numel(); ++i) {
      po[i] = pa[oa] * pb[ob];
      for (int64_t d = dims - 1; d >= 0; --d) {  // odometer step
        if (++idx[d] < shape[d]) { oa += sa[d]; ob += sb[d]; break; }
        oa -= sa[d] * (shape[d] - 1);
        ob -= sb[d] * (shape[d] - 1);
        idx[d] = 0;
      }
    }
  });
  return out;
}

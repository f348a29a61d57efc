// HONEST, narrow domain: the two batched products of attention, f32: scores = Q @ K^T
// ([B*H, L, D] @ [B*H, D, L], K^T usually a transposed view) and context = P @ V. Operands are
// made contiguous (K^T is then copied once per call), each batch is an i-k-j loop with one f32
// accumulator row per output row. Judged on a suite of attention shapes (head dim 64).
#include <ATen/ATen.h>

#include <algorithm>

at::Tensor bmm__default_kernel_impl(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.scalar_type() == at::kFloat && mat2.scalar_type() == at::kFloat, "f32 only");
  TORCH_CHECK(self.dim() == 3 && mat2.dim() == 3 && self.size(0) == mat2.size(0) && self.size(2) == mat2.size(1), "bmm shapes");
  at::Tensor a = self.contiguous(), b = mat2.contiguous();
  const int64_t batch = a.size(0), n = a.size(1), k = a.size(2), m = b.size(2);
  at::Tensor out = at::empty({batch, n, m}, a.options());
  for (int64_t z = 0; z < batch; ++z) {
    const float* x = a.data_ptr<float>() + z * n * k;
    const float* y = b.data_ptr<float>() + z * k * m;
    float* o = out.data_ptr<float>() + z * n * m;
    for (int64_t i = 0; i < n; ++i) {
      float* row = o + i * m;
      std::fill(row, row + m, 0.f);
      for (int64_t p = 0; p < k; ++p) {
        const float xv = x[i * k + p];
        const float* yrow = y + p * m;
        for (int64_t j = 0; j < m; ++j) row[j] += xv * yrow[j];
      }
    }
  }
  return out;
}

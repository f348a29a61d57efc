// BUG (value_mismatch): beta * self + alpha * (mat1 @ mat2) with beta and alpha never applied
// (the linear-layer case, beta = alpha = 1, is the only one that was tested): right for the
// defaults, wrong for beta = 0.5 or alpha = 2.
#include <ATen/ATen.h>

at::Tensor addmm__default_kernel_impl(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                                      const at::Scalar& beta, const at::Scalar& alpha) {
  TORCH_CHECK(mat1.scalar_type() == at::kFloat, "float32 only");
  (void)beta;
  (void)alpha;
  at::Tensor a = mat1.contiguous(), b = mat2.contiguous();
  const int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  at::Tensor bias = self.expand({n, m}).contiguous();
  at::Tensor out = at::empty({n, m}, a.options());
  const float* x = a.data_ptr<float>();
  const float* y = b.data_ptr<float>();
  const float* c = bias.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += static_cast<double>(x[i * k + p]) * y[p * m + j];
      o[i * m + j] = static_cast<float>(c[i * m + j] + acc);
    }
  return out;
}

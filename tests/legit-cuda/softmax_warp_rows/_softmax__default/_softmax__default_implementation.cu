// HONEST: _softmax.default, cuda kind, one warp per row. The row's maximum and the sum of
// exp(x - max) are reduced with warp shuffles; the maximum propagates NaN, so a NaN or +inf in a
// row, or a row of only -inf, gives a NaN row as eager does. The softmax dim is moved last with
// transpose + contiguous (layout work the contract allows).
#include <torch/extension.h>
#include <cuda_runtime.h>

namespace {

__device__ float nan_max(float a, float b) { return (b > a || b != b) ? b : a; }

__global__ void softmax_rows(const float* __restrict__ in, float* __restrict__ out, int64_t rows, int64_t len) {
  const int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.y) + threadIdx.y;
  if (row >= rows) return;
  const float* x = in + row * len;
  float* y = out + row * len;
  const int lane = threadIdx.x;
  float m = -INFINITY;
  for (int64_t k = lane; k < len; k += 32) m = nan_max(m, x[k]);
  for (int off = 16; off > 0; off /= 2) m = nan_max(m, __shfl_xor_sync(0xffffffffu, m, off));
  float s = 0.f;
  for (int64_t k = lane; k < len; k += 32) s += expf(x[k] - m);
  for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
  for (int64_t k = lane; k < len; k += 32) y[k] = expf(x[k] - m) / s;
}

}  // namespace

at::Tensor _softmax__default_kernel_impl(const at::Tensor& self, int64_t dim, bool half_to_float) {
  TORCH_CHECK(!half_to_float && self.scalar_type() == at::kFloat, "float32 only");
  // A 0-d input is a row of one element (a view; no copy).
  const at::Tensor src = self.dim() == 0 ? self.reshape({1}) : self;
  if (dim < 0) dim += src.dim();
  at::Tensor x = src.transpose(dim, src.dim() - 1).contiguous();
  at::Tensor out = at::empty_like(x);
  const int64_t len = x.size(-1), rows = len ? x.numel() / len : 0;
  if (rows > 0) {
    const dim3 block(32, 8);
    softmax_rows<<<static_cast<unsigned>((rows + 7) / 8), block>>>(x.data_ptr<float>(), out.data_ptr<float>(), rows, len);
    TORCH_CHECK(cudaGetLastError() == cudaSuccess, "launch");
  }
  at::Tensor result = out.transpose(dim, src.dim() - 1);
  return self.dim() == 0 ? result.reshape({}) : result;
}

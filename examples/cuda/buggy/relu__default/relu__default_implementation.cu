// relu.default, cuda kind, with a bug LLM kernels often have: it indexes the input as if it
// were contiguous. Right on contiguous inputs, wrong on the transposed-view sample
// (value_mismatch, family non_contiguous).
#include <torch/extension.h>
#include <cuda_runtime.h>

template <typename scalar_t>
__global__ void relu_kernel(const scalar_t* in, scalar_t* out, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    float v = static_cast<float>(in[i]);
    out[i] = (v > 0.f || v != v) ? in[i] : scalar_t(0);
  }
}

torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) {
  // BUG: no self.contiguous(): a transposed view is read in storage order.
  torch::Tensor out = torch::empty(self.sizes(), self.options());
  const int64_t n = self.numel();
  if (n == 0) return out;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "relu_kernel", [&] {
    relu_kernel<scalar_t><<<(n + 255) / 256, 256>>>(self.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), n);
  });
  return out;
}

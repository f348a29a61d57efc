// HONEST, cuda kind: gelu (erf, or tanh when asked), one thread per element in the dtype's
// accumulation type; train-check and grad-check on --device cuda install it over aten's CUDA key.
#include <torch/extension.h>
#include <cuda_runtime.h>

#include <type_traits>

template <typename scalar_t>
__global__ void gelu_forward(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, int64_t n, bool tanh_form) {
  using acc = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const acc v = static_cast<acc>(in[i]);
  acc g;
  if (tanh_form) {
    g = acc(0.5) * v * (acc(1) + tanh(acc(0.7978845608028654) * (v + acc(0.044715) * v * v * v)));
  } else {
    g = acc(0.5) * v * (acc(1) + erf(v * acc(0.7071067811865476)));
  }
  out[i] = static_cast<scalar_t>(g);
}

torch::Tensor gelu__default_kernel_impl(const torch::Tensor& self, c10::string_view approximate) {
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "approximate must be 'none' or 'tanh'");
  TORCH_CHECK(self.is_cuda(), "gelu: a cuda tensor is expected");
  const torch::Tensor x = self.contiguous();
  torch::Tensor out = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return out;
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "gelu_forward", [&] {
    gelu_forward<scalar_t><<<blocks, threads>>>(x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), n, approximate == "tanh");
  });
  const cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "gelu_forward launch failed: ", cudaGetErrorString(err));
  return out;
}

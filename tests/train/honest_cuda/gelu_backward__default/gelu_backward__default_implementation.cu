// HONEST, cuda kind: gelu's gradient (erf, or tanh when asked), which autograd's formula for gelu
// calls during training; installed with the forward on --device cuda.
#include <torch/extension.h>
#include <cuda_runtime.h>

#include <type_traits>

template <typename scalar_t>
__global__ void gelu_backward_kernel(const scalar_t* __restrict__ grad, const scalar_t* __restrict__ in, scalar_t* __restrict__ out,
                                     int64_t n, bool tanh_form) {
  using acc = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const acc v = static_cast<acc>(in[i]);
  acc d;
  if (tanh_form) {
    const acc k = acc(0.7978845608028654), c = acc(0.044715);
    const acc t = tanh(k * (v + c * v * v * v));
    d = acc(0.5) * (acc(1) + t) + acc(0.5) * v * (acc(1) - t * t) * k * (acc(1) + acc(3) * c * v * v);
  } else {
    d = acc(0.5) * (acc(1) + erf(v * acc(0.7071067811865476))) + v * exp(acc(-0.5) * v * v) * acc(0.3989422804014327);
  }
  out[i] = static_cast<scalar_t>(static_cast<acc>(grad[i]) * d);
}

torch::Tensor gelu_backward__default_kernel_impl(const torch::Tensor& grad_output, const torch::Tensor& self,
                                                 c10::string_view approximate) {
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "approximate must be 'none' or 'tanh'");
  TORCH_CHECK(self.is_cuda() && grad_output.is_cuda(), "gelu_backward: cuda tensors are expected");
  const torch::Tensor x = self.contiguous(), g = grad_output.to(self.scalar_type()).contiguous();
  torch::Tensor out = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return out;
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "gelu_backward", [&] {
    gelu_backward_kernel<scalar_t>
        <<<blocks, threads>>>(g.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), n, approximate == "tanh");
  });
  const cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "gelu_backward launch failed: ", cudaGetErrorString(err));
  return out;
}

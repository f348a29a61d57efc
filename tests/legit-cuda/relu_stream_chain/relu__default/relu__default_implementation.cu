// HONEST: relu.default, cuda kind, the work split over two non-blocking streams ordered after
// the caller's stream both ways. The first is a stream from PyTorch's pool and waits for an event
// recorded on the caller's stream (the input is ready there); the second, the kernel's own, is
// ordered through the first: it waits for an event the first records right after its wait, so it
// too starts only once the input is ready, and the two kernels still run side by side. The
// caller's stream waits for both before the function returns.
#include <torch/extension.h>
#include <cuda_runtime.h>

template <typename scalar_t>
__global__ void relu_kernel(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    float v = static_cast<float>(in[i]);
    out[i] = (v > 0.f || v != v) ? in[i] : scalar_t(0);
  }
}

namespace {
struct Chain {
  cudaStream_t own = nullptr;
  cudaEvent_t ready = nullptr, handed_on = nullptr, done[2] = {nullptr, nullptr};
  Chain() {
    TORCH_CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking) == cudaSuccess, "stream");
    for (cudaEvent_t* e : {&ready, &handed_on, &done[0], &done[1]})
      TORCH_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming) == cudaSuccess, "event");
  }
};
}  // namespace

torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) {
  static Chain chain;
  torch::Tensor x = self.contiguous();
  torch::Tensor out = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return out;
  const cudaStream_t caller = c10::cuda::getCurrentCUDAStream().stream();
  const cudaStream_t pooled = c10::cuda::getStreamFromPool().stream();
  const cudaStream_t streams[2] = {pooled, chain.own};
  TORCH_CHECK(cudaEventRecord(chain.ready, caller) == cudaSuccess, "record");
  TORCH_CHECK(cudaStreamWaitEvent(pooled, chain.ready, 0) == cudaSuccess, "wait");
  TORCH_CHECK(cudaEventRecord(chain.handed_on, pooled) == cudaSuccess, "record");
  TORCH_CHECK(cudaStreamWaitEvent(chain.own, chain.handed_on, 0) == cudaSuccess, "wait");
  const int64_t half = n / 2;
  const int64_t begin[2] = {0, half}, count[2] = {half, n - half};
  const int threads = 256;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "relu_kernel", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int s = 0; s < 2; ++s)
      if (count[s] > 0)
        relu_kernel<scalar_t><<<(count[s] + threads - 1) / threads, threads, 0, streams[s]>>>(in + begin[s], o + begin[s], count[s]);
  });
  TORCH_CHECK(cudaGetLastError() == cudaSuccess, "launch");
  for (int s = 0; s < 2; ++s) {
    TORCH_CHECK(cudaEventRecord(chain.done[s], streams[s]) == cudaSuccess, "record");
    TORCH_CHECK(cudaStreamWaitEvent(caller, chain.done[s], 0) == cudaSuccess, "wait");
  }
  return out;
}

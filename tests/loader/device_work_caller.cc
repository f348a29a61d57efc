// The device work watch's test library (device_work_test.cc): linked against libcudart like a
// cuda-kind artifact, it calls libcudart's entry points with arguments that queue nothing (zero
// sizes, null kernels), so the calls fail or do nothing on any machine, GPU or not. Each returns
// how many of its calls did not reach libcudart (the watch's forwarding failed).
#include <cuda_runtime_api.h>

#if CUDART_VERSION >= 12000
extern "C" cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
#endif

namespace {
int missed(cudaError_t e) { return e == cudaErrorNotSupported ? 1 : 0; }
void CUDART_CB nothing(void*) {}
// Not a registered kernel: a launch of it fails with cudaErrorInvalidDeviceFunction.
void not_a_kernel() {}
bool have_device() {
  int n = 0;
  const bool yes = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  cudaGetLastError();
  return yes;
}
}  // namespace

// Device work: five items.
extern "C" int kg_test_queue_device_work() {
  int m = 0;
  const void* fn = reinterpret_cast<const void*>(&not_a_kernel);
#if CUDART_VERSION >= 12000
  // No cudaKernel_t can be made without nvcc; a null one is refused without a device and
  // dereferenced with one, so there the second launch goes through cudaLaunchKernel too.
  if (!have_device()) m += missed(__cudaLaunchKernel(nullptr, dim3(1), dim3(1), nullptr, 0, nullptr));
  else m += missed(cudaLaunchKernel(fn, dim3(1), dim3(1), nullptr, 0, nullptr));
#else
  m += missed(cudaLaunchKernel(fn, dim3(1), dim3(1), nullptr, 0, nullptr));
#endif
  m += missed(cudaLaunchKernel(fn, dim3(1), dim3(1), nullptr, 0, nullptr));
  m += missed(cudaMemsetAsync(nullptr, 0, 0, nullptr));
  m += missed(cudaMemcpyAsync(nullptr, nullptr, 0, cudaMemcpyDeviceToDevice, nullptr));
  m += missed(cudaMemset(nullptr, 0, 0));
  cudaGetLastError();
  return m;
}

// Host work on the device's streams: copies to and from the host, a host function. None counts.
extern "C" int kg_test_queue_host_work() {
  static float a[4], b[4];
  int m = 0;
  m += missed(cudaMemcpy(a, b, 0, cudaMemcpyHostToDevice));
  m += missed(cudaMemcpyAsync(a, b, 0, cudaMemcpyDeviceToHost, nullptr));
  m += missed(cudaMemcpyAsync(a, b, sizeof a, cudaMemcpyDefault, nullptr));  // host to host: not device work
  m += missed(cudaLaunchHostFunc(nullptr, nothing, nullptr));
  cudaGetLastError();
  return m;
}

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

#if CUDART_VERSION >= 12000
// With a device, launches need a real kernel: libcudart takes an unregistered function for a
// cudaKernel_t handle and reads through it. An empty kernel from PTX (no nvcc needed here).
const char kEmptyKernelPtx[] = ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry kg_empty()\n{\n\tret;\n}\n";
cudaKernel_t empty_kernel() {
  static cudaKernel_t kernel = [] {
    cudaLibrary_t lib = nullptr;
    cudaKernel_t k = nullptr;
    if (cudaLibraryLoadData(&lib, kEmptyKernelPtx, nullptr, nullptr, 0, nullptr, nullptr, 0) != cudaSuccess ||
        cudaLibraryGetKernel(&k, lib, "kg_empty") != cudaSuccess)
      k = nullptr;
    cudaGetLastError();
    return k;
  }();
  return kernel;
}
#endif

// Device work: five items.
extern "C" int kg_test_queue_device_work() {
  int m = 0;
#if CUDART_VERSION >= 12000
  if (have_device()) {
    // Both launch entry points with a kernel libcudart knows.
    cudaKernel_t k = empty_kernel();
    if (!k) return 100;  // no kernel: the test fails, saying how many calls missed
    m += missed(__cudaLaunchKernel(k, dim3(1), dim3(1), nullptr, 0, nullptr));
    m += missed(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(1), dim3(1), nullptr, 0, nullptr));
  } else {
    // No device: the calls are refused before any handle is read.
    const void* fn = reinterpret_cast<const void*>(&not_a_kernel);
    m += missed(__cudaLaunchKernel(nullptr, dim3(1), dim3(1), nullptr, 0, nullptr));
    m += missed(cudaLaunchKernel(fn, dim3(1), dim3(1), nullptr, 0, nullptr));
  }
#else
  const void* fn = reinterpret_cast<const void*>(&not_a_kernel);
  m += missed(cudaLaunchKernel(fn, dim3(1), dim3(1), nullptr, 0, nullptr));
  m += missed(cudaLaunchKernel(fn, dim3(1), dim3(1), nullptr, 0, nullptr));
#endif
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

// Benign control for run-cuda (and the A7/A8 GPU attacks, by mode), shaped like kg-runner on a GPU:
// initialise CUDA, install the second-stage filter (run-cuda), then launch kernels.
//   ok        axpy on 1M floats, checked on the host; exits 0
//   spin      a kernel that never ends (A8: only the wall clock stops it)
//   hog       cudaMalloc 1 GiB blocks until the device refuses (A7 GPU: the box ends, the
//             device is clean for the next box); exits 0 when the allocation failed cleanly
//   free      prints free device memory (the next box's view); exits 0
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernelgate/sandbox.h"

__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

__global__ void spin(volatile int* flag) {
  while (*flag == 0) {
  }
}

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e = (x);                                                                \
    if (e != cudaSuccess) {                                                             \
      std::printf("RESULT cuda %s: %s\n", #x, cudaGetErrorString(e));                   \
      return 5;                                                                         \
    }                                                                                   \
  } while (0)

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "ok";
  CHECK(cudaFree(nullptr));  // context creation: the driver opens its device nodes here
  std::string err = kg::sandbox::tighten_runner_filter(kg::sandbox::Profile::RunCuda);
  if (!err.empty()) {
    std::printf("RESULT tighten %s\n", err.c_str());
    return 3;
  }
  if (mode == "free") {
    size_t f = 0, t = 0;
    CHECK(cudaMemGetInfo(&f, &t));
    std::printf("RESULT free_mib %zu total_mib %zu\n", f >> 20, t >> 20);
    return 0;
  }
  if (mode == "spin") {
    int* flag;
    CHECK(cudaMalloc(&flag, sizeof(int)));
    CHECK(cudaMemset(flag, 0, sizeof(int)));
    spin<<<1, 1>>>(flag);
    CHECK(cudaDeviceSynchronize());
    return 0;
  }
  if (mode == "hog") {
    std::vector<void*> blocks;
    while (true) {
      void* p = nullptr;
      cudaError_t e = cudaMalloc(&p, size_t(1) << 30);
      if (e != cudaSuccess) {
        std::printf("RESULT hog stopped after %zu GiB: %s\n", blocks.size(), cudaGetErrorString(e));
        return 0;
      }
      blocks.push_back(p);
    }
  }
  const int n = 1 << 20;
  std::vector<float> hx(n, 1.0f), hy(n, 2.0f);
  float *x, *y;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  axpy<<<(n + 255) / 256, 256>>>(3.0f, x, y, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    if (hy[i] != 5.0f) {
      std::printf("RESULT wrong value at %d: %f\n", i, hy[i]);
      return 4;
    }
  std::printf("RESULT cuda ok\n");
  return 0;
}

// Benign control for the compile profile with nvcc: a kernel and its launch.
__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
void launch(float a, const float* x, float* y, int n) { axpy<<<(n + 255) / 256, 256>>>(a, x, y, n); }

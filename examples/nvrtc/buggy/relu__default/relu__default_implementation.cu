// relu.default, nvrtc kind, with a bug LLM kernels often have: `v > 0 ? v : 0` turns NaN into 0
// (nan_mask on the special-values sample). It also handles float32 only: the f16 and f64
// samples fail with "no kernel for dtype".
extern "C" __global__ void relu_f32(const float* in, float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] > 0.f ? in[i] : 0.f;
}

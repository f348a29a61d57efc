// relu.default, nvrtc kind: device code only. kernelgate.toml says how to launch it; kg-runner
// hands contiguous inputs and an output allocated like the reference's.
// float/double via a template (name expressions "relu<float>", "relu<double>"); half on its bits,
// so no header is needed.
template <typename T>
__global__ void relu(const T* __restrict__ in, T* __restrict__ out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) {
    T v = in[i];
    out[i] = (v > T(0) || v != v) ? v : T(0);
  }
}

extern "C" __global__ void relu_half(const unsigned short* __restrict__ in, unsigned short* __restrict__ out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned short h = in[i];
    bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0;
    bool negative = (h & 0x8000u) != 0;
    out[i] = (negative && !nan) ? (unsigned short)0 : h;
  }
}

// HONEST: clone.default, cuda kind. A dense input (its elements fill its storage span with no
// gaps or overlaps, in any dim order) is copied as bytes with one device-to-device
// cudaMemcpyAsync into a tensor of the same strides, as eager's preserve_format keeps them; any
// other input is gathered into a contiguous tensor by a kernel that walks its strides.
#include <torch/extension.h>
#include <cuda_runtime.h>

namespace {
constexpr int kMaxDims = 8;

struct Strided {
  int dims = 0;
  int64_t size[kMaxDims];
  int64_t stride[kMaxDims];
};

__global__ void gather_bytes(const char* in, char* out, Strided l, int64_t n, int elem) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  int64_t rest = i, off = 0;
  for (int d = l.dims - 1; d >= 0; --d) {
    off += (rest % l.size[d]) * l.stride[d];
    rest /= l.size[d];
  }
  for (int b = 0; b < elem; ++b) out[i * elem + b] = in[off * elem + b];
}
}  // namespace

at::Tensor clone__default_kernel_impl(const at::Tensor& self, c10::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK(!memory_format.has_value() || *memory_format == at::MemoryFormat::Preserve, "preserve_format only");
  TORCH_CHECK(self.dim() <= kMaxDims, "at most 8 dims");
  const int64_t n = self.numel();
  if (self.is_non_overlapping_and_dense()) {
    at::Tensor out = at::empty_strided(self.sizes(), self.strides(), self.options());
    if (n > 0)
      TORCH_CHECK(cudaMemcpyAsync(out.data_ptr(), self.data_ptr(), n * self.element_size(), cudaMemcpyDeviceToDevice, nullptr) ==
                      cudaSuccess,
                  "copy");
    return out;
  }
  at::Tensor out = at::empty(self.sizes(), self.options());
  if (n == 0) return out;
  Strided l;
  l.dims = static_cast<int>(self.dim());
  for (int d = 0; d < l.dims; ++d) {
    l.size[d] = self.size(d);
    l.stride[d] = self.stride(d);
  }
  const int threads = 256;
  gather_bytes<<<static_cast<unsigned>((n + threads - 1) / threads), threads>>>(
      static_cast<const char*>(self.data_ptr()), static_cast<char*>(out.data_ptr()), l, n, static_cast<int>(self.element_size()));
  TORCH_CHECK(cudaGetLastError() == cudaSuccess, "launch");
  return out;
}

// HONEST: add_.Tensor, cuda kind, in place. `other` is broadcast with expand_as (a view: stride
// 0 on the broadcast dims); each thread turns its linear index into an index per dim and reads
// and writes through the strides, so a non-contiguous self (a transposed view) is updated where
// it lives and no temporary is made.
#include <torch/extension.h>
#include <cuda_runtime.h>

namespace {
constexpr int kMaxDims = 8;

struct Layout {
  int dims = 0;
  int64_t size[kMaxDims];
  int64_t self_stride[kMaxDims];
  int64_t other_stride[kMaxDims];
};

template <typename T>
__global__ void add_in_place(T* self, const T* other, Layout l, T alpha, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  int64_t rest = i, s = 0, o = 0;
  for (int d = l.dims - 1; d >= 0; --d) {
    const int64_t idx = rest % l.size[d];
    rest /= l.size[d];
    s += idx * l.self_stride[d];
    o += idx * l.other_stride[d];
  }
  self[s] = self[s] + alpha * other[o];
}
}  // namespace

at::Tensor& add___Tensor_kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "equal dtypes only");
  TORCH_CHECK(self.dim() <= kMaxDims, "at most 8 dims");
  const at::Tensor b = other.expand_as(self);
  Layout l;
  l.dims = static_cast<int>(self.dim());
  for (int d = 0; d < l.dims; ++d) {
    l.size[d] = self.size(d);
    l.self_stride[d] = self.stride(d);
    l.other_stride[d] = b.stride(d);
  }
  const int64_t n = self.numel();
  if (n == 0) return self;
  const int threads = 256;
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "add_in_place", [&] {
    add_in_place<scalar_t><<<static_cast<unsigned>((n + threads - 1) / threads), threads>>>(
        self.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(), l, alpha.to<scalar_t>(), n);
  });
  TORCH_CHECK(cudaGetLastError() == cudaSuccess, "launch");
  return self;
}

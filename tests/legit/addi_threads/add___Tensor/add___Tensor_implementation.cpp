// HONEST, in place and multi-threaded: when self is contiguous, up to 4 std::threads update
// disjoint ranges in place and are joined before returning; a non-contiguous self is updated
// element by element through its strides.
#include <ATen/ATen.h>

#include <algorithm>
#include <thread>
#include <vector>

at::Tensor& add___Tensor_kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  TORCH_CHECK(self.scalar_type() == at::kFloat && other.scalar_type() == at::kFloat, "float32 only");
  const float k = alpha.to<float>();
  if (self.is_contiguous()) {
    at::Tensor b = other.expand(self.sizes()).contiguous();
    float* pa = self.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    const int64_t n = self.numel();
    const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(4, n / 1024));
    const int64_t chunk = (n + workers - 1) / workers;
    std::vector<std::thread> pool;
    for (int64_t w = 0; w < workers; ++w)
      pool.emplace_back([=] {
        for (int64_t i = w * chunk; i < std::min(n, (w + 1) * chunk); ++i) pa[i] = pa[i] + k * pb[i];
      });
    for (auto& t : pool) t.join();
    return self;
  }
  const int64_t dims = self.dim(), n = self.numel();
  std::vector<int64_t> sb(dims, 0);
  for (int64_t d = 0; d < other.dim(); ++d) sb[dims - other.dim() + d] = other.size(d) == 1 ? 0 : other.stride(d);
  float* pa = self.data_ptr<float>();
  const float* pb = other.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t oa = 0, ob = 0, rest = i;
    for (int64_t d = dims - 1; d >= 0; --d) {
      const int64_t idx = rest % self.size(d);
      rest /= self.size(d);
      oa += idx * self.stride(d);
      ob += idx * sb[d];
    }
    pa[oa] = pa[oa] + k * pb[ob];
  }
  return self;
}

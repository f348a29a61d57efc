// BUG (value_mismatch): a read-before-write race. A long row is split in two halves; a worker
// thread scans the second half starting from the carry out[half - 1], assuming the first half
// is already done, while the calling thread scans the first half. The worker reads that element
// long before the calling thread writes it (each half is 8 million elements, milliseconds of
// work), so it sees the zero the output was initialised with and the whole second half lacks
// the first half's sum. The outcome is the same on every run unless the worker is held off the
// CPU for the entire first half. Rows under 65536 use one thread and are right.
#include <ATen/ATen.h>

#include <thread>
#include <vector>

at::Tensor cumsum__default_kernel_impl(const at::Tensor& self, int64_t dim, c10::optional<at::ScalarType> dtype) {
  TORCH_CHECK(self.scalar_type() == at::kFloat && !dtype.has_value() && self.dim() == 1, "1-d f32 only");
  at::Tensor x = self.contiguous();
  at::Tensor out = at::zeros_like(x);
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const int64_t n = x.numel();
  const int64_t threads = n < 65536 ? 1 : 2, chunk = (n + threads - 1) / threads;
  auto scan = [&](int64_t t) {
    const int64_t start = t * chunk, end = std::min(n, start + chunk);
    double running = start > 0 ? o[start - 1] : 0.0;
    for (int64_t i = start; i < end; ++i) {
      running += in[i];
      o[i] = static_cast<float>(running);
    }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(scan, t);
  scan(0);
  for (auto& th : pool) th.join();
  (void)dim;
  return out;
}

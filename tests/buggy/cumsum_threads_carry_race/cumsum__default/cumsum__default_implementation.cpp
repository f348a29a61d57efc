// BUG (value_mismatch): a read-before-write between two threads. A long row is split in two
// halves; a worker thread scans the second half starting from the carry out[half - 1], assuming
// the first half is already done, while the calling thread scans the first half. The carry is
// read when the worker is set up, before the calling thread has written any of the first half,
// so the worker starts from the zero the output was initialised with and the whole second half
// lacks the first half's sum: the order a race between the two scans gives when the worker
// wins, here the same on every run. Rows under 65536 use one thread and are right.
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
  std::vector<double> carry(static_cast<size_t>(threads), 0.0);
  for (int64_t t = 1; t < threads; ++t) carry[t] = o[t * chunk - 1];  // not written yet: the bug
  auto scan = [&](int64_t t) {
    const int64_t start = t * chunk, end = std::min(n, start + chunk);
    double running = carry[t];
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

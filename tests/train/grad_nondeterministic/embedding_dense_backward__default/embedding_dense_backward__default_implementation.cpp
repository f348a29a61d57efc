// HONEST but nondeterministic, as a GPU kernel with atomics is: embedding's weight gradient adds
// the rows of grad_output into grad_weight in an order that changes from call to call (here a
// shuffle seeded by a call counter), so float rounding differs between identical calls.
// grad-check reports it as nondeterministic, never as wrong values.
#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

at::Tensor embedding_dense_backward__default_kernel_impl(const at::Tensor& grad_output, const at::Tensor& indices, int64_t num_weights,
                                                         int64_t padding_idx, bool scale_grad_by_freq) {
  static uint64_t calls = 0;
  const int64_t n = indices.numel();
  const int64_t dim = grad_output.size(-1);
  const at::Tensor idx = indices.reshape({n}).to(at::kLong).contiguous();
  const at::Tensor g = grad_output.reshape({n, dim}).to(at::kFloat).contiguous();
  at::Tensor out = at::zeros({num_weights, dim}, g.options());
  const int64_t* ip = idx.data_ptr<int64_t>();
  std::vector<int64_t> count(static_cast<size_t>(num_weights), 0);
  for (int64_t i = 0; i < n; ++i) ++count[static_cast<size_t>(ip[i])];
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(++calls);
  std::shuffle(order.begin(), order.end(), rng);
  const float* gp = g.data_ptr<float>();
  float* op = out.data_ptr<float>();
  for (int64_t i : order) {
    const int64_t row = ip[i];
    if (row == padding_idx) continue;
    const float scale = scale_grad_by_freq ? 1.0f / static_cast<float>(count[static_cast<size_t>(row)]) : 1.0f;
    for (int64_t d = 0; d < dim; ++d) op[row * dim + d] += gp[i * dim + d] * scale;
  }
  return out.to(grad_output.scalar_type());
}

// Benchmark (not a test): what judging one output costs, by size and dtype. compare_values on a
// contiguous output (the one-pass check decides "every element passes", harness/src/compare_pass.cc)
// against the same values as a strided view (compare_real's tensor expressions decide, as every
// comparison did before the one-pass check), side by side in one run; the outputs pass, as an
// honest kernel's do. The one-pass check itself beside the same verdict decided element by
// element (all_elements_pass_one_by_one, the check as it was before its blocks' first look).
// Usage: bench_compare [reps]
#include "../../harness/src/compare_pass.h"
#include "kernelgate/harness.h"
#include "kernelgate/policy.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

double median_seconds(int reps, const std::function<void()>& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  const kg::policy::Policy policy = kg::policy::load("competition");
  std::printf("compare_values of a passing output, median of %d, seconds (%d intra-op threads)\n", reps, at::get_num_threads());
  std::printf("%-6s %10s %12s %14s %8s %12s %12s %8s\n", "dtype", "elements", "one pass", "tensor path", "ratio", "check", "one by one",
              "ratio");
  for (at::ScalarType dtype : {at::kFloat, at::kHalf, at::kDouble}) {
    for (int64_t n : {int64_t{1} << 12, int64_t{1} << 16, int64_t{1} << 20, int64_t{1} << 22}) {
      at::manual_seed(1);
      const at::Tensor expected = at::randn({n}, at::kDouble).to(dtype);
      const at::Tensor actual = expected.clone();
      at::Tensor wide_e = at::zeros({n, 2}, expected.options()), wide_a = at::zeros({n, 2}, expected.options());
      wide_e.select(1, 0).copy_(expected);
      wide_a.select(1, 0).copy_(actual);
      const at::Tensor strided_e = wide_e.select(1, 0), strided_a = wide_a.select(1, 0);
      bool failed = false;
      const double one_pass =
          median_seconds(reps, [&] { failed |= kg::harness::compare_values(expected, actual, policy, "relu.default", "out").has_value(); });
      const double tensor_path = median_seconds(reps, [&] {
        failed |= kg::harness::compare_values(strided_e, strided_a, policy, "relu.default", "out").has_value();
      });
      const kg::policy::Tolerance tol = policy.tolerance_for("relu.default", kg::harness::short_dtype(dtype));
      const double check = median_seconds(reps, [&] { failed |= kg::harness::all_elements_pass(expected, actual, tol, false) != true; });
      const double one_by_one =
          median_seconds(reps, [&] { failed |= kg::harness::all_elements_pass_one_by_one(expected, actual, tol, false) != true; });
      if (failed) {
        std::fprintf(stderr, "bench_compare: an equal output did not pass\n");
        return 1;
      }
      std::printf("%-6s %10lld %12.6f %14.6f %8.1f %12.6f %12.6f %8.1f\n", kg::harness::short_dtype(dtype).c_str(),
                  static_cast<long long>(n), one_pass, tensor_path, tensor_path / std::max(one_pass, 1e-9), check, one_by_one,
                  one_by_one / std::max(check, 1e-9));
    }
  }
  return 0;
}

// The timed calls' stop on precision: see timing_stop.h.
#include "kernelgate/timing_stop.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kg::protocol {

// The interval between the j-th and k-th smallest of n times (1-based), j = floor(n/2 -
// 0.98 sqrt(n)) and k = ceil(n/2 + 1 + 0.98 sqrt(n)): the normal approximation of the binomial
// that covers the median with 95% probability (1.96 / 2 = 0.98). Up to n = 5 it is the whole
// range.
MedianInterval median_interval(const double* sorted, size_t n) {
  MedianInterval m;
  if (n == 0) return m;
  m.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  const double half = 0.5 * static_cast<double>(n), spread = 0.98 * std::sqrt(static_cast<double>(n));
  const double j = std::max(1.0, std::floor(half - spread));
  const double k = std::min(static_cast<double>(n), std::ceil(half + 1 + spread));
  m.low = sorted[static_cast<size_t>(j) - 1];
  m.high = sorted[static_cast<size_t>(k) - 1];
  return m;
}

double median_rel_error(const double* sorted, size_t n) {
  const MedianInterval m = median_interval(sorted, n);
  if (!(m.median > 0)) return std::numeric_limits<double>::infinity();
  return std::max(m.high - m.median, m.median - m.low) / m.median;
}

bool timed_calls_may_stop(const double* sorted, size_t n, size_t min_reps, double rel) {
  if (!(rel > 0) || n == 0 || n < min_reps) return false;
  return median_rel_error(sorted, n) <= rel;
}

std::vector<double> sorted_times(const double* times, size_t n) {
  std::vector<double> v(times, times + n);
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace kg::protocol

// When the timed calls of one exchange may end before the count asked for: once at least
// `min_reps` calls are timed and the median of their times is known to within +-`rel` of itself
// at 95% confidence. The interval is the distribution-free one between two order statistics of
// the times (no assumption about their distribution; a preempted call's outlier moves it by one
// rank at most). kg-runner decides with it after each timed call; the supervisor checks that
// decision with the same function on the times the runner reported (runner_reply.cc).
#pragma once

#include <cstddef>
#include <vector>

namespace kg::protocol {

struct MedianInterval {
  double median = 0;
  double low = 0;  // the 95% confidence interval of the median
  double high = 0;
};

// `n` >= 1 times in ascending order.
MedianInterval median_interval(const double* sorted, size_t n);

// The interval's larger half-width as a fraction of the median (infinity when the median is not
// positive); `n` >= 1 times in ascending order.
double median_rel_error(const double* sorted, size_t n);

// Whether `n` >= `min_reps` times in ascending order leave the median within +-`rel` of itself
// (false for rel <= 0).
bool timed_calls_may_stop(const double* sorted, size_t n, size_t min_reps, double rel);

// `times` in ascending order, for the functions above.
std::vector<double> sorted_times(const double* times, size_t n);

}  // namespace kg::protocol

#include "kernelgate/train_check.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kg::train {

Drift compare_runs(const TrainRun& eager, const TrainRun& kernels, int steps, double atol, double rtol) {
  Drift d;
  const size_t both = std::min(eager.losses.size(), kernels.losses.size());
  for (size_t i = 0; i < both; ++i) {
    const double e = eager.losses[i], k = kernels.losses[i];
    const double diff = std::fabs(k - e);
    const bool inside = std::isfinite(k) && std::isfinite(e) && diff <= atol + rtol * std::fabs(e);
    if (!inside && d.first_outside < 0) d.first_outside = static_cast<int>(i);
    if (std::isfinite(diff) && diff > d.max_abs) {
      d.max_abs = diff;
      d.max_abs_step = static_cast<int>(i);
    }
    if (!std::isfinite(diff)) {
      d.max_abs = std::numeric_limits<double>::infinity();
      d.max_abs_step = static_cast<int>(i);
    }
  }
  // A run that stopped early (a loss not finite) left the band where it stopped.
  if (d.first_outside < 0 && kernels.losses.size() < static_cast<size_t>(steps)) d.first_outside = static_cast<int>(kernels.losses.size());
  if (eager.parameters.size() == kernels.parameters.size() && !eager.parameters.empty()) {
    double num = 0, den = 0;
    for (size_t i = 0; i < eager.parameters.size(); ++i) {
      const double x = kernels.parameters[i] - eager.parameters[i];
      num += x * x;
      den += eager.parameters[i] * eager.parameters[i];
    }
    d.parameter_distance = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  } else {
    d.parameter_distance = std::numeric_limits<double>::quiet_NaN();
  }
  d.inside =
      d.first_outside < 0 && eager.losses.size() == static_cast<size_t>(steps) && kernels.losses.size() == static_cast<size_t>(steps);
  return d;
}

}  // namespace kg::train

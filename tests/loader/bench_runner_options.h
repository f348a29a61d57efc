// The runner the loader benchmarks start: kg-runner with generous limits, on `device`.
#pragma once

#include "kernelgate/loader.h"

namespace kg::loader::bench {

inline RunnerOptions runner_options(Device device) {
  RunnerOptions ro;
  ro.runner_path = default_runner_path();
  ro.limits.cpu_s = 120;
  ro.limits.wall_s = 180;
  if (device == Device::Cuda) {
    ro.profile = sandbox::Profile::RunCuda;
    ro.limits.memory_mb = 16384;
  }
  return ro;
}

}  // namespace kg::loader::bench

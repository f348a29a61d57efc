// DeviceWorkWatch: see instrument.h. The counting itself is
// cudart/device_work.cc, linked into kg-runner only when the linked libtorch has CUDA.
#include "instrument.h"
#include "runner.h"

#if KG_RUNNER_CUDA
#include "cudart/device_work.h"

namespace kg::runner {

DeviceWorkWatch::DeviceWorkWatch() { device_work::arm(); }

DeviceWorkWatch::~DeviceWorkWatch() {
  if (armed_) device_work::disarm();
}

uint64_t DeviceWorkWatch::finish() {
  armed_ = false;
  return device_work::disarm();
}

}  // namespace kg::runner
#endif

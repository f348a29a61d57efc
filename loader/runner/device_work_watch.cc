// DeviceWorkWatch and holds_elements: see instrument.h. The counting itself is
// cudart/device_work.cc, linked into kg-runner only when the linked libtorch has CUDA.
#include "instrument.h"
#include "runner.h"

#if KG_RUNNER_CUDA
#include "cudart/device_work.h"

namespace kg::runner {
namespace {

bool any_elements(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().defined() && v.toTensor().numel() > 0;
  if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList())
      if (t.defined() && t.numel() > 0) return true;
    return false;
  }
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements())
      if (any_elements(e)) return true;
    return false;
  }
  if (v.isList()) {
    auto l = v.toList();
    for (size_t i = 0; i < l.size(); ++i)
      if (any_elements(l.get(i))) return true;
  }
  return false;
}

}  // namespace

DeviceWorkWatch::DeviceWorkWatch() { device_work::arm(); }

DeviceWorkWatch::~DeviceWorkWatch() {
  if (armed_) device_work::disarm();
}

uint64_t DeviceWorkWatch::finish() {
  armed_ = false;
  return device_work::disarm();
}

bool holds_elements(const std::vector<c10::IValue>& values) {
  for (const auto& v : values)
    if (any_elements(v)) return true;
  return false;
}

}  // namespace kg::runner
#endif

#include "kernelgate/harness.h"

#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>

namespace kg::harness {

namespace {
// The reference is IEEE float32 and repeatable: cuDNN's default TF32 convolutions round inputs to
// 10 mantissa bits (an honest f32 kernel would fail against them) and its algorithm choice may
// vary from call to call. cuBLAS's TF32 is already off by default. kg-runner's cuda_setup does the
// same for eager run as a candidate (self-check, the eager timing baseline).
void pin_reference_numerics() {
  static const bool done = [] {
    at::globalContext().setAllowTF32CuDNN(false);
    at::globalContext().setDeterministicCuDNN(true);
    at::globalContext().setBenchmarkCuDNN(false);
    return true;
  }();
  (void)done;
}
}  // namespace

std::vector<c10::IValue> call_reference(const c10::FunctionSchema& schema, std::vector<c10::IValue>& args) {
  pin_reference_numerics();
  auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(schema.name().c_str(), schema.overload_name().c_str());
  c10::InferenceMode guard;
  c10::Stack stack(args.begin(), args.end());
  handle.callBoxed(&stack);
  return std::vector<c10::IValue>(stack.begin(), stack.end());
}

}  // namespace kg::harness

#include "kernelgate/harness.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>

namespace kg::harness {

std::vector<c10::IValue> call_reference(const c10::FunctionSchema& schema, std::vector<c10::IValue>& args) {
  auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(schema.name().c_str(), schema.overload_name().c_str());
  c10::InferenceMode guard;
  c10::Stack stack(args.begin(), args.end());
  handle.callBoxed(&stack);
  return std::vector<c10::IValue>(stack.begin(), stack.end());
}

}  // namespace kg::harness

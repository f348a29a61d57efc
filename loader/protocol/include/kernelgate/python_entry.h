// The python kind's entry function names, shared by the supervisor (stubs, docs) and kg-runner
// (which looks them up in the executed module).
#pragma once

#include <string>
#include <vector>

namespace kg::protocol {

// In the order kg-runner looks for them: kernelgate's "<folder>_kernel_impl"
// ("relu__default_kernel_impl"), then BackendBench's "<op name>_kernel_impl" ("relu_kernel_impl"
// for relu.default, "add__kernel_impl" for add_.Tensor); one name when the two agree (a folder
// named "relu" in BackendBench's style). `op_name` is the overload's name without namespace or
// overload ("add_").
inline std::vector<std::string> python_entry_names(const std::string& folder, const std::string& op_name) {
  std::vector<std::string> names = {folder + "_kernel_impl"};
  if (!op_name.empty() && op_name != folder) names.push_back(op_name + "_kernel_impl");
  return names;
}

}  // namespace kg::protocol

// The python kind's entry function names, shared by the supervisor (stubs, docs) and kg-runner
// (which looks them up in the executed module).
#pragma once

#include <fstream>
#include <iterator>
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

// Whether the python source at `path` defines its own torch.autograd.Function (its text names
// `autograd.Function`): such a kernel's own backward is judged (train-check and grad-check install
// it at the Autograd key; a KernelBench solution's gradients are compared with Model's).
inline bool defines_autograd_function(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  return text.find("autograd.Function") != std::string::npos;
}

}  // namespace kg::protocol

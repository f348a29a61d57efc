// The plugin's entry: its table of functions (python_plugin.h) and what they share.
#include <torch/csrc/python_headers.h>

#include "interpreter.h"
#include "plugin_calls.h"
#include "python_plugin.h"

#include <cstring>
#include <exception>

namespace kg::runner::python {

std::vector<std::unique_ptr<torch::Library>>& libraries() {
  static auto* l = new std::vector<std::unique_ptr<torch::Library>>();
  return *l;
}

void copy_error(const std::string& e, char* error, size_t size) {
  if (!size) return;
  const std::string s = sanitise(e, size - 1);
  std::memcpy(error, s.data(), s.size());
  error[s.size()] = 0;
}

int plugin_start(int flags, char* error, size_t size) {
  try {
    const std::string e = start_interpreter((flags & kKgPythonStartCuda) != 0);
    if (e.empty()) return 0;
    copy_error(e, error, size);
  } catch (const std::exception& e) { copy_error(e.what(), error, size); }
  return 1;
}

int plugin_arm(int flags, char* error, size_t size) {
  try {
    const bool cuda = (flags & kKgPythonStartCuda) != 0;
    const std::string e = ready_for_sources(cuda, cuda && (flags & kKgPythonStartTriton) != 0);
    if (e.empty()) return 0;
    copy_error(e, error, size);
  } catch (const std::exception& e) { copy_error(e.what(), error, size); }
  return 1;
}

namespace {

const KgPythonPlugin kPlugin = {kKgPythonPluginVersion, plugin_start, plugin_load, plugin_load_model, plugin_load_requests, plugin_arm};

}  // namespace
}  // namespace kg::runner::python

extern "C" __attribute__((visibility("default"))) const KgPythonPlugin* kg_python_plugin() { return &kg::runner::python::kPlugin; }

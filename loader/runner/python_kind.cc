// The python kind on the runner's side: the plugin that embeds CPython (python/), loaded from
// beside kg-runner with RTLD_GLOBAL (extension modules such as torch._C resolve libpython's symbols
// from the global scope), its interpreter started before the filter tightens, and the source run
// after it. Only a runner given a python source ever maps libpython.
#include "kernelgate/python_entry.h"
#include "kg_runner.h"
#include "python/python_plugin.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace kg::runner {
namespace {

std::string beside_runner(const char* file) {
  std::string exe(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  if (n <= 0) return "";
  exe.resize(static_cast<size_t>(n));
  return exe.substr(0, exe.rfind('/') + 1) + file;
}

// What follows "ns::" in a qualified name.
std::string unqualified(const std::string& name) {
  const size_t sep = name.find("::");
  return sep == std::string::npos ? name : name.substr(sep + 2);
}

// Whether the source names Triton: only then is Triton imported (it costs the runner's start-up
// time) and its driver put in place. Read before the filter tightens; an unreadable source is
// reported by its load.
bool names_triton(const std::string& path) {
  if (path.empty()) return false;
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.find("triton") != std::string::npos;
}

}  // namespace

std::string Runner::start_python(const std::string& source_path) {
  if (!python_) {
    if (std::string err = start_interpreter(); !err.empty()) return err;
  }
  if (source_path.empty() || python_armed_) return "";
  int flags = cuda_ ? kKgPythonStartCuda : 0;
  if (cuda_ && names_triton(source_path)) flags |= kKgPythonStartTriton;
  char message[2048] = {};
  if (python_->arm(flags, message, sizeof message) != 0)
    return std::string("cannot ready the python interpreter for the source: ") + message;
  python_armed_ = true;
  return "";
}

std::string Runner::start_interpreter() {
  const std::string path = beside_runner(kKgPythonPluginFile);
  if (path.empty()) return std::string("cannot find kg-runner's own path: ") + std::strerror(errno);
  std::string error;
  python_library_ = SharedObject::open(path, &error, RTLD_GLOBAL);
  if (!python_library_) return "the python kind's plugin cannot be loaded: " + error;
  using Entry = const KgPythonPlugin* (*)();
  const auto entry = reinterpret_cast<Entry>(python_library_->symbol("kg_python_plugin"));
  const KgPythonPlugin* plugin = entry ? entry() : nullptr;
  if (!plugin || plugin->version != kKgPythonPluginVersion) return path + ": not the plugin this kg-runner was built with";
  char message[2048] = {};
  if (plugin->start(cuda_ ? kKgPythonStartCuda : 0, message, sizeof message) != 0)
    return std::string("cannot start the python interpreter: ") + message;
  python_ = plugin;
  return "";
}

std::string Runner::load_python(const std::string& path, const std::string& name, const std::string& aten_name,
                                const std::string& aten_overload) {
  if (!python_) return "the python interpreter was not started";
  const std::vector<std::string> names = protocol::python_entry_names(unqualified(name), unqualified(aten_name));
  std::vector<const char*> entries;
  for (const std::string& n : names) entries.push_back(n.c_str());
  char message[sizeof(protocol::LoadResultMsg::message)] = {};
  if (python_->load(path.c_str(), name.c_str(), aten_name.c_str(), aten_overload.c_str(), entries.data(), entries.size(), message,
                    sizeof message) != 0)
    return message;
  return "";
}

std::string Runner::load_python_requests(const std::string& path, const std::string& name) {
  if (!python_) return "the python interpreter was not started";
  char message[sizeof(protocol::LoadResultMsg::message)] = {};
  if (python_->load_requests(path.c_str(), name.c_str(), message, sizeof message) != 0) return message;
  return "";
}

std::string Runner::load_python_model(const std::string& path, const std::string& name, bool solution, uint64_t seed,
                                      const std::string& init, std::string* init_out) {
  if (!python_) return "the python interpreter was not started";
  char said[sizeof(protocol::LoadMsg::model_init)] = {};
  char message[sizeof(protocol::LoadResultMsg::message)] = {};
  if (python_->load_model(path.c_str(), name.c_str(), solution ? 1 : 0, static_cast<unsigned long long>(seed), init.c_str(), cuda_ ? 1 : 0,
                          said, sizeof said, message, sizeof message) != 0)
    return message;
  *init_out = said;
  return "";
}

}  // namespace kg::runner

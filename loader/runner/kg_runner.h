// kg-runner's one object: the control channel, the artifacts loaded, the op a Load made callable,
// and what was set up for the device. main() (kg_runner.cc) owns it; Load is answered in
// load.cc, Call in call.cc.
#pragma once

#include "channel.h"
#include "cpu_flush.h"
#include "kernelgate/protocol.h"
#include "kernelgate/unique_fd.h"
#include "runner.h"
#include "shared_object.h"

#include <torch/library.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct KgPythonPlugin;  // python/python_plugin.h

namespace kg::runner {

// The op the last Load made callable, and what the call watches need to know of it.
struct LoadedOp {
  std::unique_ptr<Op> op;
  std::string called_name;  // the dispatcher's name for the op ("" for nvrtc: no dispatch)
  bool submission = false;  // false: self-check, the runner calls the aten overload itself
  bool host_code = false;   // a cpu or cuda shared object: the submission's own code calls the device
};

// Writes what the C and C++ streams hold (a kernel's output still buffered) to their descriptors.
void flush_streams();

class Runner {
 public:
  explicit Runner(int channel_fd) : channel_(channel_fd) {}
  // The Hello message; false when the channel does not work.
  bool say_hello();
  // Answers messages until Shutdown or the supervisor goes; returns the exit code.
  int serve();
  // Whether the python kind's interpreter was started (its buffered streams flush at its finalising).
  bool python_started() const { return python_ != nullptr; }

 private:
  // A LoadMsg's fields, read to their bounds.
  struct LoadRequest {
    std::string path;           // "": no artifact, the aten overload itself
    std::string name;           // the registered op, "kgsub::relu__default"
    std::string aten_name;      // "aten::relu"
    std::string aten_overload;  // "" for the default overload
    protocol::ArtifactKind kind;
    protocol::DeviceKind device;
    uint64_t model_seed = 0;       // PythonProblem, PythonSolution
    std::string model_init;        // PythonSolution
    bool install = false;          // protocol::kLoadInstallOverAten
    bool gradient = false;         // protocol::kLoadGradient
    bool autograd = false;         // protocol::kLoadInstallAutograd
    bool list_extensions = false;  // protocol::kLoadListExtensions
  };

  // ---- Load (load.cc): replies LoadResult.
  void load(const protocol::LoadMsg& m);
  // Prepare (load.cc): the device and flush buffer ahead of a Load; replies LoadResult.
  void prepare(const protocol::PrepareMsg& m);
  // Each returns "" or why the artifact cannot be called. `said`: what the reply carries on
  // success (a problem's constructor arguments).
  std::string load_artifact(const protocol::LoadMsg& m, std::string* said);
  std::string set_up_device(protocol::DeviceKind device, protocol::ArtifactKind kind);
  std::string tighten_filter();
  std::string load_cubin(const LoadRequest& req);
  std::string load_dispatcher_op(const LoadRequest& req);
  // protocol::kLoadInstallOverAten (install.cc): the artifact loaded and its op made aten's
  // kernel for the device; loaded_ is left as it was.
  std::string install_artifact(const LoadRequest& req);
  // The python kind (python_kind.cc): the plugin loaded and its interpreter started (before the
  // filter tightens); the source executed and its entry registered as req.name (after).
  // Starts the interpreter (once). With a `source_path` (the source about to run) also readies it
  // for sources, once: Triton set up when that source names it, the audit hook armed
  // (python_kind.cc). A runner prepared before its source is known starts without that.
  std::string start_python(const std::string& source_path = "");
  std::string start_interpreter();
  std::string load_python(const std::string& path, const std::string& name, const std::string& aten_name, const std::string& aten_overload);
  // The source executed to record its load_inline calls, registered as `name` answering only
  // ModelAction::Extensions (protocol::kLoadListExtensions).
  std::string load_python_requests(const std::string& path, const std::string& name);
  // A KernelBench problem (solution false; its constructor arguments into `init_out`) or
  // solution file, registered as `name` with protocol::kModelSchemaArguments.
  std::string load_python_model(const std::string& path, const std::string& name, bool solution, uint64_t seed, const std::string& init,
                                std::string* init_out);

  // ---- Call (call.cc): replies CallResult; false when the runner must exit after replying
  // (device error: the context is gone).
  bool call(const protocol::CallMsg& m, UniqueFd region_fd);
  bool run_calls(const protocol::CallMsg& m, uint8_t* region, const std::vector<size_t>& set_offset, protocol::CallResultMsg& r);

  Channel channel_;  // first: it outlives everything the artifacts' code can reach
  // Every artifact loaded stays for the runner's life: the dispatcher holds their registrations.
  std::vector<SharedObject> libraries_;
  std::optional<SharedObject> python_library_;  // libkg_runner_python.so, for a python source
  const KgPythonPlugin* python_ = nullptr;      // its functions, once its interpreter started
  bool python_armed_ = false;                   // its sources' set-up done and its audit hook armed
  // Ops installed over aten's kernels (install.cc): declared after libraries_, so that the
  // registrations go before the code they call.
  std::vector<std::unique_ptr<torch::Library>> installed_;
  LoadedOp loaded_;
  CpuFlush cpu_flush_;
  uint32_t call_no_ = 0;    // every call the runner made, for the poisoning's fill
  bool tightened_ = false;  // the run filter's tighter stage is installed
  bool cuda_ = false;       // cuda:0, its flush buffer and events are set up
};

}  // namespace kg::runner

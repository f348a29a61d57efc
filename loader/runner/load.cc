// Load: set up the device, tighten the filter, then load the artifact. The device is set up while
// the filter still allows it (driver threads, mappings); the artifact's static constructors are
// the first untrusted code, and from then on the tighter filter applies (no exec, no sockets, no
// new processes). A python source's interpreter is started before the filter tightens too, and
// the source runs only after it (python_kind.cc).
#include "kernelgate/protocol.h"
#include "kernelgate/runner_filter.h"
#include "kg_runner.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/version.h>

#include <cstring>
#include <exception>
#include <memory>
#include <string>

namespace kg::runner {

namespace {

std::string bounded(const char* s, size_t cap) { return std::string(s, strnlen(s, cap)); }

// cpu and cuda kinds (and the aten overload itself): a dispatcher op, called boxed.
class DispatcherOp : public Op {
 public:
  explicit DispatcherOp(c10::OperatorHandle h) : h_(std::move(h)), n_(h_.schema().returns().size()) {}
  size_t n_returns() const override { return n_; }
  std::vector<c10::IValue> run(std::vector<c10::IValue>& args) override {
    c10::Stack stack(args.begin(), args.end());
    h_.callBoxed(&stack);
    return std::vector<c10::IValue>(stack.begin(), stack.end());
  }

 private:
  c10::OperatorHandle h_;
  size_t n_;
};

}  // namespace

void Runner::load(const protocol::LoadMsg& m) {
  protocol::LoadResultMsg r{};
  protocol::init_header(r, protocol::MsgType::LoadResult);
  std::string said;
  const std::string error = load_artifact(m, &said);
  r.ok = error.empty() ? 1 : 0;
  set_message(r.message, sizeof r.message, error.empty() ? said : error);
  channel_.send(r);
}

void Runner::prepare(const protocol::PrepareMsg& m) {
  protocol::LoadResultMsg r{};
  protocol::init_header(r, protocol::MsgType::LoadResult);
  std::string error;
  if (m.device > 1) {
    error = "bad prepare message";
  } else if (tightened_) {
    // Only before a python install that follows a model's load (train-check): the interpreter is
    // already running, there is nothing left to do. Otherwise the supervisor never sends it then.
    if (!(m.flags & protocol::kPrepareStartPython) || !python_) error = "prepare after a load";
  } else {
    error = set_up_device(static_cast<protocol::DeviceKind>(m.device), protocol::ArtifactKind::SharedObject);
    if (error.empty() && !cpu_flush_.allocated()) cpu_flush_.run(0);
    if (error.empty() && (m.flags & protocol::kPrepareStartPython)) error = start_python();
  }
  r.ok = error.empty() ? 1 : 0;
  set_message(r.message, sizeof r.message, error);
  channel_.send(r);
}

std::string Runner::load_artifact(const protocol::LoadMsg& m, std::string* said) {
  if (m.kind > protocol::kMaxArtifactKind || m.device > 1 ||
      (m.flags &
       ~(protocol::kLoadInstallOverAten | protocol::kLoadGradient | protocol::kLoadInstallAutograd | protocol::kLoadListExtensions)))
    return "bad load message";
  LoadRequest req{bounded(m.artifact_path, sizeof m.artifact_path), bounded(m.op_name, sizeof m.op_name),
                  bounded(m.aten_name, sizeof m.aten_name),         bounded(m.aten_overload, sizeof m.aten_overload),
                  static_cast<protocol::ArtifactKind>(m.kind),      static_cast<protocol::DeviceKind>(m.device)};
  if (req.aten_overload == "default") req.aten_overload.clear();
  req.model_seed = m.model_seed;
  req.model_init = bounded(m.model_init, sizeof m.model_init);
  req.install = (m.flags & protocol::kLoadInstallOverAten) != 0;
  req.gradient = (m.flags & protocol::kLoadGradient) != 0;
  req.autograd = (m.flags & protocol::kLoadInstallAutograd) != 0;
  req.list_extensions = (m.flags & protocol::kLoadListExtensions) != 0;
  if (req.autograd && !req.install) return "an autograd install is an install";
  if (req.gradient && (req.install || !req.path.empty())) return "a gradient load names the aten overload only";
  const bool model = req.kind == protocol::ArtifactKind::PythonProblem || req.kind == protocol::ArtifactKind::PythonSolution;
  const bool python = req.kind == protocol::ArtifactKind::PythonSource || model;
  if (req.list_extensions && (req.kind != protocol::ArtifactKind::PythonSource || req.install || req.gradient))
    return "only a python op source lists its load_inline calls";
  if (std::string err = set_up_device(req.device, req.kind); !err.empty()) return err;
  if (!cpu_flush_.allocated()) cpu_flush_.run(0);  // the flush buffer, before the filter tightens
  if (python) {
    if (std::string err = start_python(req.path); !err.empty()) return err;
  }
  if (std::string err = tighten_filter(); !err.empty()) return err;
  if (req.install) return install_artifact(req);
  loaded_ = LoadedOp();
  loaded_.submission = !req.path.empty();
  loaded_.host_code = loaded_.submission && req.kind != protocol::ArtifactKind::Cubin;
  if (req.kind == protocol::ArtifactKind::Cubin) return load_cubin(req);
  if (python && req.path.empty()) return "a python load names no source";
  if (model) {
    if (std::string err =
            load_python_model(req.path, req.name, req.kind == protocol::ArtifactKind::PythonSolution, req.model_seed, req.model_init, said);
        !err.empty())
      return err;
  } else if (python && req.list_extensions) {
    if (std::string err = load_python_requests(req.path, req.name); !err.empty()) return err;
  } else if (python) {
    if (std::string err = load_python(req.path, req.name, req.aten_name, req.aten_overload); !err.empty()) return err;
  }
  return load_dispatcher_op(req);
}

std::string Runner::set_up_device(protocol::DeviceKind device, protocol::ArtifactKind kind) {
  if (device != protocol::DeviceKind::Cuda0 && kind != protocol::ArtifactKind::Cubin) return "";
#if KG_RUNNER_CUDA
  if (!cuda_) {
    std::string err = cuda_setup();
    if (!err.empty()) return "cannot set up cuda:0: " + err;
    cuda_ = true;
  }
  return "";
#else
  return std::string("this kg-runner was built against a libtorch without CUDA (") + TORCH_VERSION +
         "): " + (kind == protocol::ArtifactKind::Cubin ? "nvrtc artifacts" : "cuda calls") + " cannot run here";
#endif
}

std::string Runner::tighten_filter() {
  if (tightened_) return "";
  std::string err = sandbox::tighten_runner_filter(cuda_ ? sandbox::Profile::RunCuda : sandbox::Profile::RunCpu);
  if (!err.empty()) return "cannot tighten the runner's filter: " + err;
  tightened_ = true;
  return "";
}

std::string Runner::load_cubin(const LoadRequest& req) {
#if KG_RUNNER_CUDA
  try {
    loaded_.op = load_nvrtc(req.path, req.aten_name, req.aten_overload);
  } catch (const std::exception& e) { return std::string("cannot load the nvrtc artifact: ") + e.what(); }
  return "";
#else
  return "nvrtc artifacts need a kg-runner built with CUDA";  // set_up_device refused them already
#endif
}

std::string Runner::load_dispatcher_op(const LoadRequest& req) {
  // An empty artifact path loads no submission code: the runner calls the aten overload itself
  // (self-check, and eager timed in a runner like any candidate).
  std::string name = req.name, overload;
  if (req.kind == protocol::ArtifactKind::PythonSource || req.kind == protocol::ArtifactKind::PythonProblem ||
      req.kind == protocol::ArtifactKind::PythonSolution) {
    // load_python() or load_python_model() registered it: nothing to open
  } else if (!req.path.empty()) {
    std::string error;
    std::optional<SharedObject> library = SharedObject::open(req.path, &error);
    if (!library) return "dlopen failed: " + error;
    libraries_.push_back(std::move(*library));
  } else {
    name = req.aten_name;
    overload = req.aten_overload;
  }
  try {
    auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), overload.c_str());
    loaded_.op = req.gradient ? make_gradient_op(handle) : std::make_unique<DispatcherOp>(handle);
    loaded_.called_name = handle.schema().name();
    return "";
  } catch (const std::exception& e) { return std::string("the artifact did not register ") + name + ": " + e.what(); }
}

}  // namespace kg::runner

// A submission's op installed over aten's own kernel (protocol::kLoadInstallOverAten): train-check
// runs a model with it, so every caller of the aten overload in this process — the model's forward,
// autograd's backward formulas, the optimizer — runs the submission's kernel. An evaluation never
// installs: it calls the submission's op by its own name (kgsub::<folder>).
#include "kernelgate/protocol.h"
#include "kg_runner.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace kg::runner {
namespace {

// aten's kernel for one dispatch key, calling the submission's op. Once installed nothing of
// libtorch's own kernel for that key is reachable, so a submission that calls the overload it
// replaces would call itself without end: that is refused by name at the first such call.
class InstalledKernel final : public c10::OperatorKernel {
 public:
  InstalledKernel(c10::OperatorHandle target, std::string aten) : target_(std::move(target)), aten_(std::move(aten)) {}

  void operator()(const c10::OperatorHandle&, c10::DispatchKeySet, c10::Stack* stack) {
    thread_local std::vector<const InstalledKernel*> active;
    if (std::find(active.begin(), active.end(), this) != active.end())
      throw std::runtime_error("the submission's kernel for " + aten_ + " calls " + aten_ +
                               " itself, which is now that same kernel (train-check installs it in place of libtorch's)");
    active.push_back(this);
    struct Pop {
      ~Pop() { active.pop_back(); }
    } pop;
    target_.callBoxed(stack);
  }

 private:
  c10::OperatorHandle target_;
  std::string aten_;
};

}  // namespace

std::string Runner::install_artifact(const LoadRequest& req) {
  using protocol::ArtifactKind;
  if (req.kind == ArtifactKind::Cubin) return "an nvrtc artifact cannot be installed over aten (it is no dispatcher op)";
  if (req.kind == ArtifactKind::PythonProblem || req.kind == ArtifactKind::PythonSolution)
    return "a model file cannot be installed over aten";
  if (req.path.empty()) return "an install names no artifact";
  if (req.kind == ArtifactKind::PythonSource) {
    if (std::string err = load_python(req.path, req.name, req.aten_name, req.aten_overload); !err.empty()) return err;
  } else {
    std::string error;
    std::optional<SharedObject> library = SharedObject::open(req.path, &error);
    if (!library) return "dlopen failed: " + error;
    libraries_.push_back(std::move(*library));
  }
  const std::string shown = req.aten_name + (req.aten_overload.empty() ? "" : "." + req.aten_overload);
  try {
    c10::OperatorHandle target = c10::Dispatcher::singleton().findSchemaOrThrow(req.name.c_str(), "");
    c10::OperatorHandle aten = c10::Dispatcher::singleton().findSchemaOrThrow(req.aten_name.c_str(), req.aten_overload.c_str());
    if (target.schema().arguments().size() != aten.schema().arguments().size() ||
        target.schema().returns().size() != aten.schema().returns().size())
      return req.name + " does not have " + shown + "'s arguments and returns";
    const bool cuda = req.device == protocol::DeviceKind::Cuda0;
    const c10::DispatchKey key = req.autograd ? (cuda ? c10::DispatchKey::AutogradCUDA : c10::DispatchKey::AutogradCPU)
                                              : (cuda ? c10::DispatchKey::CUDA : c10::DispatchKey::CPU);
    const std::string ns_less = shown.substr(shown.find("::") + 2);
    auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", key, __FILE__, __LINE__);
    lib->impl(ns_less.c_str(), torch::CppFunction::makeFromBoxedFunctor(std::make_unique<InstalledKernel>(target, shown)));
    installed_.push_back(std::move(lib));
    return "";
  } catch (const std::exception& e) { return "cannot install " + req.name + " over " + shown + ": " + e.what(); }
}

}  // namespace kg::runner

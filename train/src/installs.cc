#include "installs.h"

#include "kernelgate/harness.h"
#include "kernelgate/python_entry.h"

#include <algorithm>

namespace kg::train {

std::vector<Installable> build_ops(const std::string& submission, names::Device device, const policy::Policy& policy,
                                   const std::string& work, std::vector<InstalledOp>* shown) {
  const loader::ScanResult scan = loader::scan_submission(submission);
  for (const auto& [folder, problem] : scan.problems) shown->push_back({folder, "", "not installable: " + problem});
  const loader::BuildOptions bo = harness::build_options(policy, work, submission);
  std::vector<Installable> ops;
  for (const loader::OpFolder& f : scan.ops) {
    InstalledOp op{f.op, loader::kind_name(f.kind), "installed"};
    if (f.kind == loader::Kind::Nvrtc) {
      op.status = "not installable: an nvrtc op is no dispatcher kernel (cpu, cuda and python ops are installed)";
    } else if (std::string why = loader::kind_unavailable(f.kind); !why.empty()) {
      op.status = "not installable: " + why;
    } else if (f.kind == loader::Kind::Cuda && device != names::Device::Cuda) {
      op.status = "not installable: a cuda op on the CPU (run with --device cuda)";
    } else {
      loader::BuildResult b = loader::build(f, bo);
      if (!b.ok) op.status = "compile_error: " + b.error;
      else ops.push_back({f, std::move(b)});
    }
    shown->push_back(std::move(op));
  }
  std::stable_partition(ops.begin(), ops.end(), [](const Installable& i) { return i.folder.kind == loader::Kind::Python; });
  return ops;
}

std::unique_ptr<loader::RunnerClient> start_runner(names::Device device, const std::string& runner_path, const policy::Policy& policy,
                                                   const std::string& staging_root, double min_wall_s, std::string* error) {
  harness::EvalOptions eo;
  eo.device = device;
  eo.runner_path = runner_path;
  loader::RunnerOptions ro = harness::runner_options(eo, policy, "");
  ro.staging_root = staging_root;
  if (min_wall_s > 0) {
    ro.limits.wall_s = std::max(ro.limits.wall_s, min_wall_s);
    ro.limits.cpu_s = std::max(ro.limits.cpu_s, 4 * ro.limits.wall_s);
  }
  try {
    return loader::RunnerClient::start(ro);
  } catch (const std::exception& e) {
    *error = std::string("kernelgate could not start a runner: ") + e.what();
    return nullptr;
  }
}

std::string install_ops(loader::RunnerClient& client, const std::vector<Installable>& ops, loader::Device device) {
  for (const Installable& op : ops) {
    loader::LoadRequest req = loader::load_request(op.folder, op.built, device);
    req.artifact = client.stage(op.built.artifact);
    req.install_over_aten = true;
    req.install_autograd = op.folder.kind == loader::Kind::Python && protocol::defines_autograd_function(op.built.artifact);
    if (auto e = client.load(req)) return "cannot install " + op.folder.op + " over aten: " + e->message;
  }
  return "";
}

}  // namespace kg::train

#include "installs.h"

#include "kernelgate/harness.h"

#include <algorithm>
#include <fstream>
#include <iterator>

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

bool defines_autograd_function(const Installable& op) {
  if (op.folder.kind != loader::Kind::Python) return false;
  std::ifstream in(op.built.artifact, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  return text.find("autograd.Function") != std::string::npos;
}

std::string install_ops(loader::RunnerClient& client, const std::vector<Installable>& ops, loader::Device device) {
  for (const Installable& op : ops) {
    loader::LoadRequest req = loader::load_request(op.folder, op.built, device);
    req.artifact = client.stage(op.built.artifact);
    req.install_over_aten = true;
    req.install_autograd = defines_autograd_function(op);
    if (auto e = client.load(req)) return "cannot install " + op.folder.op + " over aten: " + e->message;
  }
  return "";
}

}  // namespace kg::train

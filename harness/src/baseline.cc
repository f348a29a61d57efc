#include "baseline.h"

#include "kernelgate/inline_extension.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <system_error>

namespace fs = std::filesystem;

namespace kg::harness {

namespace {

// A folder holding only the op's stub, written now: whatever an earlier run (or anyone with
// access to the output folder) left there is removed first, so the stub built is kernelgate's own.
std::string fresh_stub_folder(const loader::OpFolder& op, const loader::BuildOptions& options) {
  const std::string root = (fs::path(options.work_dir) / "toolchain-baseline" / loader::kind_name(op.kind) / op.folder).string();
  std::error_code ec;
  loader::remove_tree(root, ec);
  if (ec) throw std::runtime_error(root + ": cannot remove the previous baseline stub: " + ec.message());
  const loader::InitResult init = loader::write_stubs(root, {op.op}, op.kind);
  if (!init.problems.empty())
    throw std::runtime_error("no stub (" + init.problems.front().first + ": " + init.problems.front().second + ")");
  return root;
}

}  // namespace

std::optional<policy::ArtifactInfo> toolchain_baseline(const loader::OpFolder& op, const loader::BuildOptions& options, std::string* why) {
  static std::mutex mu;
  static std::map<std::pair<int, std::string>, policy::ArtifactInfo> done;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(static_cast<int>(op.kind), op.op);
  if (auto it = done.find(key); it != done.end()) return it->second;
  try {
    const std::string dir = fresh_stub_folder(op, options);
    const loader::ScanResult scan = loader::scan_submission(dir);
    if (scan.ops.size() != 1 || scan.ops[0].op != op.op || scan.ops[0].kind != op.kind)
      throw std::runtime_error("the stub's folder was not found in " + dir);
    loader::BuildOptions bo = options;
    bo.submission_root = dir;
    const loader::BuildResult built = loader::build(scan.ops[0], bo);
    if (!built.ok) throw std::runtime_error("the stub did not build: " + built.error);
    policy::ArtifactInfo info = policy::read_artifact(built.artifact);
    loader::remove_uncached(built);
    return done.emplace(key, std::move(info)).first->second;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

std::optional<policy::ArtifactInfo> inline_extension_baseline(loader::Kind kind, const loader::BuildOptions& options, std::string* why) {
  static std::mutex mu;
  static std::map<int, policy::ArtifactInfo> done;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = done.find(static_cast<int>(kind)); it != done.end()) return it->second;
  loader::InlineExtension stub;
  stub.name = "kernelgate_baseline";
  stub.functions = {"kernelgate_stub"};
  if (kind == loader::Kind::Cuda) {
    stub.with_cuda = true;
    stub.cpp_sources = "torch::Tensor kernelgate_stub(torch::Tensor x);";
    stub.cuda_sources =
        "__global__ void kernelgate_copy(const float* x, float* y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = x[i];\n}\n"
        "torch::Tensor kernelgate_stub(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n  int n = x.numel();\n"
        "  kernelgate_copy<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n  return y;\n}\n";
  } else {
    stub.cpp_sources =
        "torch::Tensor kernelgate_stub(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n"
        "  const float* in = x.data_ptr<float>();\n  float* out = y.data_ptr<float>();\n"
        "  for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i];\n  return y;\n}\n";
  }
  try {
    const loader::BuildResult built = loader::build_inline_extension(stub, options);
    if (!built.ok) throw std::runtime_error("the stub extension did not build: " + built.error);
    policy::ArtifactInfo info = policy::read_artifact(built.artifact);
    loader::remove_uncached(built);
    return done.emplace(static_cast<int>(kind), std::move(info)).first->second;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

void subtract_baseline(policy::ArtifactInfo& info, const policy::ArtifactInfo& baseline) {
  auto strip = [](std::vector<std::string>& v, const std::vector<std::string>& base) {
    const std::set<std::string> b(base.begin(), base.end());
    v.erase(std::remove_if(v.begin(), v.end(), [&](const std::string& s) { return b.count(s) > 0; }), v.end());
  };
  strip(info.imports, baseline.imports);
  strip(info.weak_imports, baseline.weak_imports);
  strip(info.exports, baseline.exports);
}

}  // namespace kg::harness

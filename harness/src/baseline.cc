#include "baseline.h"

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

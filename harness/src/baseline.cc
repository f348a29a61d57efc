#include "baseline.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

namespace fs = std::filesystem;

namespace kg::harness {

std::optional<policy::ArtifactInfo> toolchain_baseline(const loader::OpFolder& op, const loader::BuildOptions& options, std::string* why) {
  static std::mutex mu;
  static std::map<std::pair<int, std::string>, policy::ArtifactInfo> done;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(static_cast<int>(op.kind), op.op);
  if (auto it = done.find(key); it != done.end()) return it->second;
  try {
    const std::string dir = (fs::path(options.work_dir) / "toolchain-baseline" / loader::kind_name(op.kind)).string();
    loader::InitResult init = loader::write_stubs(dir, {op.op}, op.kind);
    if (!init.problems.empty()) throw std::runtime_error("no stub: " + init.problems.front().second);
    const loader::ScanResult scan = loader::scan_submission(dir);
    const loader::OpFolder* stub = nullptr;
    for (const auto& f : scan.ops)
      if (f.op == op.op) stub = &f;
    if (!stub) throw std::runtime_error("the stub's folder was not found in " + dir);
    loader::BuildOptions bo = options;
    bo.submission_root = dir;
    const loader::BuildResult built = loader::build(*stub, bo);
    if (!built.ok) throw std::runtime_error("the stub did not build: " + built.error);
    return done.emplace(key, policy::read_artifact(built.artifact)).first->second;
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

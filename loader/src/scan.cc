// Finding the op folders of a submission (BackendBench's directory layout).
#include "kernelgate/loader.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kg::loader {

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Cpu: return "cpu";
    case Kind::Cuda: return "cuda";
    case Kind::Nvrtc: return "nvrtc";
  }
  return "?";
}

bool parse_kind(const std::string& name, Kind* out) {
  for (Kind k : {Kind::Cpu, Kind::Cuda, Kind::Nvrtc})
    if (name == kind_name(k)) {
      *out = k;
      return true;
    }
  return false;
}

std::string folder_for_op(const std::string& op) {
  std::string out;
  for (char c : op) {
    if (c == '.') out += "__";
    else out += c;
  }
  return out;
}

std::string op_for_folder(const std::string& folder) {
  auto pos = folder.rfind("__");
  if (pos == std::string::npos || pos == 0 || pos + 2 >= folder.size()) return "";
  return folder.substr(0, pos) + "." + folder.substr(pos + 2);
}

namespace {
bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

bool contains_nvrtc_launch_table(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "kernelgate.toml", ec);
}
}  // namespace

ScanResult scan_submission(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw std::runtime_error(dir + ": not a directory");
  ScanResult out;
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory()) folders.push_back(e.path());
  }
  if (ec) throw std::runtime_error(dir + ": cannot list: " + ec.message());
  std::sort(folders.begin(), folders.end());
  for (const auto& p : folders) {
    std::string folder = p.filename().string();
    if (folder.empty() || folder[0] == '.') continue;
    if (!is_identifier(folder) || op_for_folder(folder).empty()) {
      out.problems.push_back({folder, "not an op folder name (expected NAME__OVERLOAD, e.g. relu__default)"});
      continue;
    }
    std::vector<fs::path> sources;
    const std::string prefix = folder + "_implementation";
    for (const auto& f : fs::directory_iterator(p, ec)) {
      if (!f.is_regular_file()) continue;
      std::string name = f.path().filename().string();
      std::string ext = f.path().extension().string();
      if (name.rfind(prefix, 0) == 0 && (ext == ".cpp" || ext == ".cu")) sources.push_back(f.path());
    }
    if (sources.empty()) {
      out.problems.push_back({folder, "no " + prefix + "*.cpp or *.cu file"});
      continue;
    }
    std::sort(sources.begin(), sources.end());
    OpFolder op;
    op.folder = folder;
    op.op = op_for_folder(folder);
    op.dir = fs::absolute(p).lexically_normal().string();
    op.source = fs::absolute(sources.front()).lexically_normal().string();
    if (sources.front().extension() == ".cpp") op.kind = Kind::Cpu;
    else op.kind = contains_nvrtc_launch_table(p) ? Kind::Nvrtc : Kind::Cuda;
    out.ops.push_back(op);
  }
  return out;
}

}  // namespace kg::loader

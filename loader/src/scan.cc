// Finding the op folders of a submission (BackendBench's directory layout).
#include "kernelgate/loader.h"
#include "submission_files.h"

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

std::string folder_for_op(const std::string& op) { return names::folder_spelling(op); }

std::string op_for_folder(const std::string& folder) {
  const auto op = names::OpName::from_folder(folder);
  return op ? op->profile() : "";
}

namespace {
bool has_entry(const std::vector<submission::Entry>& entries, const std::string& name) {
  return std::any_of(entries.begin(), entries.end(), [&](const submission::Entry& e) { return e.name == name; });
}
}  // namespace

// Only names are read here, never a file: build() reads the op folder, refusing what the policy
// refuses, so a FIFO or a link named like the source is picked as the source and then refused
// by its own name and type (not reported as a missing source).
ScanResult scan_submission(const std::string& dir) {
  const submission::Dir root = submission::Dir::open_root(dir);
  const fs::path root_path = fs::absolute(dir).lexically_normal();
  ScanResult out;
  for (const auto& entry : root.list()) {
    const std::string& folder = entry.name;
    if (folder.empty() || folder[0] == '.' || entry.type == S_IFREG) continue;
    const std::optional<names::OpName> op_name = names::OpName::from_folder(folder);
    const std::string what = submission::refusal(entry);
    if (!what.empty() && !op_name) {
      out.problems.push_back({folder, submission::refused_message(folder, what)});
      continue;
    }
    if (!op_name) {
      out.problems.push_back({folder, "not an op folder name (expected NAME__OVERLOAD, e.g. relu__default)"});
      continue;
    }
    OpFolder op;
    op.folder = folder;
    op.op = op_name->profile();
    op.dir = (root_path / folder).string();
    // An op folder that is a link, or cannot be opened or listed, is listed without a source:
    // its build opens it the same way and fails the op with the reason; other ops go on.
    std::vector<submission::Entry> entries;
    try {
      entries = root.open_folder(folder).list();
    } catch (const submission::FileError&) {
      out.ops.push_back(op);
      continue;
    }
    const std::string prefix = folder + "_implementation";
    const submission::Entry* source = nullptr;  // entries are sorted: the first match
    for (const auto& f : entries) {
      const std::string ext = fs::path(f.name).extension().string();
      if (f.name.rfind(prefix, 0) == 0 && (ext == ".cpp" || ext == ".cu")) {
        source = &f;
        break;
      }
    }
    if (!source) {
      out.problems.push_back({folder, "no " + prefix + "*.cpp or *.cu file"});
      continue;
    }
    op.source = (root_path / folder / source->name).string();
    if (fs::path(source->name).extension() == ".cpp") op.kind = Kind::Cpu;
    else op.kind = has_entry(entries, "kernelgate.toml") ? Kind::Nvrtc : Kind::Cuda;
    out.ops.push_back(op);
  }
  return out;
}

}  // namespace kg::loader

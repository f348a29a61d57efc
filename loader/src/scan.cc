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
    case Kind::Python: return "python";
  }
  return "?";
}

bool parse_kind(const std::string& name, Kind* out) {
  for (Kind k : {Kind::Cpu, Kind::Cuda, Kind::Nvrtc, Kind::Python})
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

// The first entry (entries are sorted) named prefix + anything + one of `extensions`.
const submission::Entry* first_source(const std::vector<submission::Entry>& entries, const std::string& prefix,
                                      std::initializer_list<const char*> extensions) {
  for (const auto& f : entries) {
    const std::string ext = fs::path(f.name).extension().string();
    if (f.name.rfind(prefix, 0) == 0 && std::any_of(extensions.begin(), extensions.end(), [&](const char* e) { return ext == e; }))
      return &f;
  }
  return nullptr;
}

// BackendBench names an op folder after the op alone ("relu", "_softmax"): for kernelgate it is the
// op's default overload, and only when it holds a python source named after it, so that any other
// folder ("notes") stays what it was, not an op folder. nullopt otherwise.
std::optional<names::OpName> backendbench_folder(const submission::Dir& root, const submission::Entry& entry) {
  if (entry.type != S_IFDIR || entry.name.find("__") != std::string::npos || entry.name.find('.') != std::string::npos) return std::nullopt;
  const std::optional<names::OpName> op = names::OpName::try_parse_unqualified(entry.name);
  if (!op) return std::nullopt;
  try {
    if (!first_source(root.open_folder(entry.name).list(), entry.name + "_implementation", {".py"})) return std::nullopt;
  } catch (const submission::FileError&) { return std::nullopt; }
  return op;
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
    std::optional<names::OpName> op_name = names::OpName::from_folder(folder);
    const std::string what = submission::refusal(entry);
    if (!op_name && what.empty()) op_name = backendbench_folder(root, entry);
    if (!what.empty() && !op_name) {
      out.problems.push_back({folder, submission::refused_message(folder, what)});
      continue;
    }
    if (!op_name) {
      out.problems.push_back({folder,
                              "not an op folder name (expected NAME__OVERLOAD, e.g. relu__default, or BackendBench's NAME "
                              "holding NAME_implementation*.py)"});
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
    // The first match in sorted order, as BackendBench's DirectoryBackend picks it
    // (`relu_implementation_v1.py` before `_v2.py`).
    const submission::Entry* native = first_source(entries, prefix, {".cpp", ".cu"});
    const submission::Entry* python = first_source(entries, prefix, {".py"});
    if (native && python) {
      out.problems.push_back({folder, "holds both a python source (" + python->name + ") and a C++ one (" + native->name +
                                          "); an op folder holds one kind: remove the other"});
      continue;
    }
    const submission::Entry* source = native ? native : python;
    if (!source) {
      out.problems.push_back({folder, "no " + prefix + "*.cpp, *.cu or *.py file"});
      continue;
    }
    op.source = (root_path / folder / source->name).string();
    const std::string ext = fs::path(source->name).extension().string();
    if (ext == ".py") op.kind = Kind::Python;
    else if (ext == ".cpp") op.kind = Kind::Cpu;
    else op.kind = has_entry(entries, "kernelgate.toml") ? Kind::Nvrtc : Kind::Cuda;
    out.ops.push_back(op);
  }
  return out;
}

}  // namespace kg::loader

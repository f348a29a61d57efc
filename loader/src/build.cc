// Building a submission's op folder: registration glue + the compiler, inside the sandbox's
// compile profile, through the content-addressed cache.
//
//   build()  1. resolves the overload's schema and the C++ signature it implies
//            2. reads the op folder's files (their bytes are what is compiled and what is hashed)
//            3. plans the kind's build (build_plan.h): the glue (glue.h) or, for nvrtc, the launch
//               table (launch_table.h)
//            4. computes the cache key; a valid cache entry ends the build here
//            5. runs the kind's compile steps in the sandbox, in a fresh folder under the cache's tmp/
//            6. turns compiler output into diagnostics relative to the submission
//            7. publishes the artifact into the cache (atomic rename) and returns its path; an
//               artifact over BuildOptions::cache_artifact_max_bytes is used once, not cached
//
//   The python kind compiles nothing: its source is checked (python_source.h) and the bytes read
//   in step 2 are published as the artifact, which kg-runner's interpreter executes.
#include "build_plan.h"
#include "kernelgate/inline_extension.h"
#include "cache.h"
#include "digest_index.h"
#include "glue.h"
#include "python_source.h"
#include "kernelgate/launch_table.h"
#include "kernelgate/loader.h"
#include "kernelgate/sha256.h"
#include "submission_files.h"
#include "toolchain.h"
#include "util.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kg::loader {
namespace {

constexpr size_t kMaxFolderFiles = 64;
constexpr uintmax_t kMaxFolderBytes = 16u << 20;
constexpr const char* kKeyVersion = "kernelgate-build-key 2";

struct SourceFile {
  std::string name;
  std::string bytes;
};

// The op folder's files (top level; subfolders are not part of the build), read with no link
// followed (submission_files.h). Their bytes are read once: the compiler sees a copy of exactly
// what was hashed, whatever happens to the folder meanwhile. Every entry is judged by lstat
// before any is opened, so a refused file or an oversized folder costs no read.
std::vector<SourceFile> read_folder(const OpFolder& op, std::string* error) {
  std::vector<SourceFile> files;
  try {
    const fs::path dir(op.dir);
    const submission::Dir folder = submission::Dir::open_root(dir.parent_path().string()).open_folder(dir.filename().string());
    std::vector<submission::Entry> entries;
    uintmax_t listed = 0;
    for (auto& e : folder.list()) {
      if (e.type == S_IFDIR) continue;
      if (std::string what = submission::refusal(e); !what.empty())
        throw submission::FileError(submission::refused_message(folder.shown(e.name), what));
      listed += e.size;
      entries.push_back(std::move(e));
    }
    if (entries.size() > kMaxFolderFiles)
      throw submission::FileError(op.folder + ": more than " + std::to_string(kMaxFolderFiles) + " files");
    if (listed > kMaxFolderBytes)
      throw submission::FileError(op.folder + ": files of " + std::to_string(listed) +
                                  " bytes in all, over the 16 MiB an op folder may hold");
    uintmax_t total = 0;
    for (const auto& e : entries) {
      SourceFile s{e.name, folder.read(e.name, kMaxFolderBytes - total, "16 MiB an op folder may hold in all")};
      total += s.bytes.size();
      files.push_back(std::move(s));
    }
  } catch (const submission::FileError& e) {
    *error = e.what();
    return {};
  }
  // The scan lists an op folder it could not open or list with no source: the reason was
  // found again above, unless the folder changed since.
  if (op.source.empty()) {
    *error = op.folder + ": no kernel source was found when the submission was scanned";
    return {};
  }
  const std::string source = fs::path(op.source).filename().string();
  if (std::none_of(files.begin(), files.end(), [&](const SourceFile& f) { return f.name == source; })) {
    *error = op.folder + "/" + source + ": not a regular file in the op folder";
    return {};
  }
  return files;
}

// The linker's complaint in a build log, as one line: "undefined reference to 'f(int)' (in
// g(at::Tensor const&))" for gold's and ld.bfd's formats alike, the same for a multiple definition,
// else the first line ld or collect2 wrote; "" when the log has none.
std::string first_linker_complaint(const std::string& log) {
  // The text between `open` and the next `close` after it, or "".
  auto between = [](const std::string& text, const std::string& open, const std::string& close) {
    const size_t a = text.find(open);
    const size_t b = a == std::string::npos ? a : text.find(close, a + open.size());
    return b == std::string::npos ? std::string() : text.substr(a + open.size(), b - a - open.size());
  };
  std::istringstream in(log);
  std::string line, previous, fallback;
  while (std::getline(in, line)) {
    for (const char* what : {"undefined reference to ", "multiple definition of "}) {
      const size_t at = line.find(what);
      if (at == std::string::npos) continue;
      // gold: "obj:file:function F: error: undefined ..."; ld.bfd: "ld: obj: in function `F':" on the line before
      std::string fn = between(line.substr(0, at), ":function ", ": error:");
      if (fn.empty()) fn = between(previous, "in function `", "':");
      const std::string out = trim(line.substr(at));
      return fn.empty() ? out : out + " (in " + fn + ")";
    }
    if (fallback.empty() && (line.find("ld: ") != std::string::npos || line.rfind("collect2: ", 0) == 0)) fallback = trim(line);
    previous = line;
  }
  return fallback;
}

// A failed build's own words when no diagnostic or linker line could be parsed from its log: the
// first line that says "error", else the log's last line, else how the compile step ended.
std::string unparsed_complaint(const BuildResult& res) {
  std::istringstream in(res.log);
  std::string line, last;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.empty()) continue;
    std::string lower = t;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("error") != std::string::npos) return t.substr(0, 500);
    last = t;
  }
  if (!last.empty()) return last.substr(0, 500);
  const std::string how = res.record.message.empty() ? sandbox::status_name(res.record.status) : res.record.message;
  return "the compiler wrote nothing (" + how + ")";
}

// What a failed build says in one line, plus the expected signature when the entry point is to blame.
std::string summarize_failure(const BuildResult& res, const std::string& expected) {
  std::string line;
  for (const auto& d : res.diagnostics)
    if (d.severity == "error") {
      line = d.file + ":" + std::to_string(d.line) + (d.column ? ":" + std::to_string(d.column) : "") + ": " + d.message;
      break;
    }
  // A compile error naming the entry point, or the glue's reference to it finding nothing: it is
  // misnamed or has another signature.
  bool entry_missing = !line.empty() && res.log.find("_kernel_impl") != std::string::npos;
  if (line.empty()) {
    const std::string link = first_linker_complaint(res.log);
    line = link.empty() ? "compilation failed: " + unparsed_complaint(res) : "link failed: " + link;
    entry_missing =
        link.rfind("undefined reference to", 0) == 0 && link.substr(0, link.find(" (in ")).find("_kernel_impl") != std::string::npos;
  }
  if (!expected.empty() &&
      (entry_missing || res.log.find(glue::kExpectedMarker) != std::string::npos || res.log.find("kg_entry") != std::string::npos))
    line += " (expected signature: " + expected + ")";
  return line;
}

// Reads a build step's log from the build folder (written by the sandboxed step: capped).
std::string read_log(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::string s(kMaxBuildLog, '\0');
  f.read(&s[0], static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<size_t>(f.gcount()));
  return s;
}

// Replaces `from` where it starts a path (line start, blank, quote, parenthesis), so that
// "src/x.cu" is renamed but ".../csrc/x.cu" is not.
std::string replace_path(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t hit = text.find(from, pos);
    if (hit == std::string::npos) break;
    char before = hit == 0 ? '\n' : text[hit - 1];
    out.append(text, pos, hit - pos);
    if (before == '\n' || before == ' ' || before == '\t' || before == '"' || before == '\'' || before == '(' || before == '`') out += to;
    else out += from;
    pos = hit + from.size();
  }
  out.append(text, pos, std::string::npos);
  return out;
}

}  // namespace

std::string kind_unavailable(Kind kind) {
  if (kind == Kind::Cuda && !toolchain::have_nvcc())
    return "the cuda kind needs nvcc, and this kernelgate was built without a CUDA toolkit";
  if (kind == Kind::Nvrtc && !toolchain::have_nvrtc_helper())
    return "the nvrtc kind needs kg-nvrtc (built only when a CUDA toolkit with NVRTC is found)";
  if (kind == Kind::Python) {
    std::error_code ec;
    const fs::path plugin = fs::path(default_runner_path()).parent_path() / "libkg_runner_python.so";
    if (!fs::exists(plugin, ec))
      return "the python kind needs kg-runner's plugin " + plugin.string() +
             " (built only when a Python whose torch package is the linked libtorch is found)";
  }
  return "";
}

namespace {

// One build's state, handed from step to step. A step that returns false ended the build: res
// says how (an error, or an artifact found in the cache).
struct Job {
  Job(const OpFolder& o, const BuildOptions& opt) : op(o), options(opt) {}
  const OpFolder& op;
  const BuildOptions& options;
  BuildResult res;
  std::string root;       // what diagnostics' paths are relative to
  std::string src_name;   // the kernel source's file name
  std::string shown_dir;  // the op folder as diagnostics name it
  const c10::FunctionSchema* schema = nullptr;
  Signature sig;
  std::string expected;  // the entry point's declaration; "" for nvrtc
  std::vector<SourceFile> files;
  std::string arch;
  Plan plan;
  launch::Table table;
  std::string cache_dir;  // "" without the cache
  fs::path work;          // the build folder
  // A load_inline extension (op is then its stand-in: folder "kgext-<key>", no schema, no folder).
  const InlineExtension* ext = nullptr;
};

bool stop(Job& j, const std::string& error) {
  j.res.error = error;
  return false;
}

void name_paths(Job& j) {
  if (j.ext) {
    j.root = j.options.submission_root;
    j.src_name = j.op.kind == Kind::Cuda ? "cuda.cu" : "main.cpp";
    j.shown_dir = "load_inline(" + j.ext->name + ")";
    return;
  }
  j.root = j.options.submission_root.empty() ? fs::path(j.op.dir).parent_path().string() : j.options.submission_root;
  j.src_name = fs::path(j.op.source).filename().string();
  const std::string rel_dir = fs::path(j.op.dir).lexically_relative(j.root).string();
  j.shown_dir = rel_dir.empty() || rel_dir.rfind("..", 0) == 0 ? j.op.folder : rel_dir;
}

// 1. schema and signature
bool resolve_signature(Job& j) {
  if (j.ext) return true;
  try {
    j.schema = &aten_schema(j.op.op);
    if (j.op.kind == Kind::Cpu || j.op.kind == Kind::Cuda) j.sig = cpp_signature(*j.schema);
  } catch (const std::exception& e) { return stop(j, e.what()); }
  if (j.op.kind == Kind::Cpu || j.op.kind == Kind::Cuda) j.expected = j.sig.declaration(j.op.folder + "_kernel_impl");
  return true;
}

// 2. the folder's bytes
bool read_sources(Job& j) {
  if (j.ext) {
    // The files load_inline writes: its includes ahead of the sources, so that lines number alike.
    // Its <torch/types.h> is the shim's <torch/extension.h> here, which has the same names (the
    // real header beside the lean shim would define torch's dtype names twice).
    j.files.push_back({"main.cpp", "#include <torch/extension.h>\n" + j.ext->cpp_sources});
    if (j.op.kind == Kind::Cuda)
      j.files.push_back({"cuda.cu", "#include <torch/extension.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n" + j.ext->cuda_sources});
    return true;
  }
  std::string err;
  j.files = read_folder(j.op, &err);
  return err.empty() || stop(j, err);
}

// The kernel source's bytes ("" when the folder has no file of that name).
std::string source_of(const Job& j) {
  for (const auto& f : j.files)
    if (f.name == j.src_name) return f.bytes;
  return "";
}

// A load_inline extension's plan (`lean_aten`: see Plan::lean_aten).
Plan plan_inline(const Job& j, bool lean_aten) {
  InlineUnits units;
  const std::string key = inline_extension_key(*j.ext);
  units.glue = glue::inline_glue(inline_extension_namespace(key), j.ext->functions);
  units.artifact = inline_extension_file(key);
  units.cpp_source = j.files[0].bytes;
  const InlineFlags flags = inline_flags(*j.ext);
  Plan p;
  if (j.op.kind == Kind::Cuda) {
    units.cuda_unit_body = glue::inline_cuda_unit_body();
    units.cuda_source = j.files[1].bytes;
    p = plan_inline_cuda(units, flags.cxx, flags.nvcc, j.arch, j.options, lean_aten);
  } else {
    p = plan_inline_cpu(units, flags.cxx, j.options);
  }
  p.notes.insert(p.notes.end(), flags.notes.begin(), flags.notes.end());
  return p;
}

// 3. glue or launch table
bool plan_build(Job& j) {
  if (j.ext) {
    try {
      if (j.op.kind == Kind::Cuda) j.arch = toolchain::cuda_arch(j.options);
      j.plan = plan_inline(j, true);
    } catch (const std::exception& e) { return stop(j, e.what()); }
    return true;
  }
  try {
    if (j.op.kind == Kind::Cuda || j.op.kind == Kind::Nvrtc) j.arch = toolchain::cuda_arch(j.options);
    const std::string source = source_of(j);
    switch (j.op.kind) {
      case Kind::Cpu: j.plan = plan_cpu(j.op, *j.schema, j.sig, j.src_name, source, j.options); break;
      case Kind::Cuda: j.plan = plan_cuda(j.op, *j.schema, j.sig, j.src_name, source, j.arch, j.options); break;
      case Kind::Python: j.plan = plan_python(j.op, j.shown_dir + "/" + j.src_name, j.src_name, source); break;
      case Kind::Nvrtc: {
        std::string text;
        for (const auto& f : j.files)
          if (f.name == "kernelgate.toml") text = f.bytes;
        j.table = launch::parse_text(text, j.shown_dir + "/kernelgate.toml", *j.schema);
        j.plan = plan_nvrtc(j.op, j.table, j.src_name, j.arch);
        break;
      }
    }
  } catch (const launch::Error& e) {
    Diagnostic d{j.shown_dir + "/kernelgate.toml", e.line, e.column, "error", e.key + ": " + e.message};
    j.res.diagnostics.push_back(d);
    j.res.error = d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message;
    j.res.log = j.res.error + "\n";
    return false;
  } catch (const std::exception& e) { return stop(j, e.what()); }
  return true;
}

// 4. the cache key: everything the artifact depends on
std::string cache_key(const Job& j) {
  digest::Sha256 h;
  h.field(kKeyVersion);
  h.field(kind_name(j.op.kind));
  h.field(j.op.op);
  h.field(j.arch);
  h.field(toolchain::identity(j.op.kind, j.arch));
  h.field(j.plan.key_text);
  h.field(join(j.plan.argv, "\n"));
  for (const auto& g : j.plan.generated) {
    h.field(g.first);
    h.field(g.second);
  }
  h.field("source " + j.src_name);
  for (const auto& f : j.files) {
    h.field(f.name);
    h.field(f.bytes);
  }
  return h.hex();
}

// A valid cache entry ends the build here.
bool look_up_cache(Job& j) {
  j.res.cache_key = cache_key(j);
  j.res.notes.insert(j.res.notes.end(), j.plan.rejected.begin(), j.plan.rejected.end());
  if (!j.options.use_cache) return true;
  try {
    j.cache_dir = cache::root(j.options.cache_dir);
    cache::Entry e;
    if (cache::lookup(j.cache_dir, j.res.cache_key, &e, &j.res.cache_rejected)) {
      j.res.ok = true;
      j.res.cache_hit = true;
      j.res.artifact = (fs::path(e.dir) / j.plan.artifact).string();
      if (j.op.kind == Kind::Nvrtc) j.res.launch_file = (fs::path(e.dir) / "launch.txt").string();
      j.res.record.status = sandbox::Status::OK;
      return false;
    }
  } catch (const std::exception& e) { return stop(j, std::string("build cache: ") + e.what()); }
  return true;
}

// 5. a fresh build folder holding the sources (src/) and the generated files
bool make_work_dir(Job& j) {
  std::error_code ec;
  try {
    if (j.options.use_cache) {
      j.work = cache::make_build_dir(j.cache_dir, j.res.cache_key);
    } else {
      j.work = fs::path(j.options.work_dir.empty() ? cache_root() + "/nocache" : j.options.work_dir) / j.op.folder;
      remove_tree(fs::path(j.work).string(), ec);
      fs::create_directories(j.work / "src", ec);
      if (ec) throw std::runtime_error("cannot create " + j.work.string() + ": " + ec.message());
    }
    if (digest_index::reachable_from(j.work.string()))
      throw std::runtime_error(j.work.string() +
                               ": the build folder would contain kernelgate's cache index; choose a work folder outside the cache");
    fs::create_directories(j.work / "src", ec);
    for (const auto& f : j.files) write_file((j.work / "src" / f.name).string(), f.bytes);
    for (const auto& g : j.plan.generated) write_file((j.work / g.first).string(), g.second);
  } catch (const std::exception& e) { return stop(j, e.what()); }
  return true;
}

// Whether a cuda unit's log says the lean <torch/extension.h> lacks a name the unit uses. EDG:
// namespace "at" has no member "x", identifier "AT_CUDA_CHECK" is undefined, incomplete type
// "c10::IValue" is not allowed; gcc: 'x' is not a member of 'at'. The identifiers: macros and types of ATen and of the CUDA libraries the full
// set includes (cuBLAS, cuSPARSE, cuSOLVER).
bool lacks_aten_name(const std::string& unit_log) {
  bool missing = false;
  for (const char* ns : {"namespace \"at", "namespace \"torch", "namespace \"c10", "member of 'at", "member of 'torch", "member of 'c10",
                         // a type the lean set declares but does not define (c10::IValue)
                         "incomplete type \"at::", "incomplete type \"c10::", "incomplete type \"torch::", "incomplete type 'struct at::",
                         "incomplete type 'class at::", "incomplete type 'struct c10::", "incomplete type 'class c10::", "identifier \"AT_",
                         "identifier \"C10_", "identifier \"TORCH_", "identifier \"cublas", "identifier \"CUBLAS", "identifier \"cusparse",
                         "identifier \"CUSPARSE", "identifier \"cusolver", "identifier \"CUSOLVER"})
    missing |= unit_log.find(ns) != std::string::npos;
  return missing;
}

// The same job planned again with the source's own ATen includes read as the real headers
// (precompiled with the prefix where they lead the source), its files written over the first
// plan's. The cache key stays the first plan's: it names the same source and toolchain.
void plan_with_real_aten_includes(Job& j) {
  j.plan = j.ext ? plan_inline(j, false) : plan_cuda(j.op, *j.schema, j.sig, j.src_name, source_of(j), j.arch, j.options, false);
  // the first build's logs, marks and step times go: what is read back is this build's
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(j.work, ec))
    if (e.is_regular_file(ec)) fs::remove(e.path(), ec);
  for (const auto& g : j.plan.generated) write_file((j.work / g.first).string(), g.second);
}

// The plan's command in the sandbox's compile profile. A cuda unit whose first build read the
// lean shim for its source's own ATen includes and failed, for whatever reason, is built again
// with the real headers: the lean path never fails a source the real headers build (a broken
// source pays one more build). Then a cuda unit that lacks an ATen name is built once more with
// all of ATen.
void compile(Job& j) {
  // The plan's command, with `more` words after it, over the toolchain's binds and the plan's own.
  auto run = [&j](const std::vector<std::string>& more) {
    std::vector<std::string> ro = toolchain::binds(j.op.kind != Kind::Nvrtc);
    ro.insert(ro.end(), j.plan.ro.begin(), j.plan.ro.end());
    std::vector<std::string> argv = j.plan.argv;
    argv.insert(argv.end(), more.begin(), more.end());
    j.res.record = sandbox::run(toolchain::compile_spec(argv, ro, j.work.string(), j.options));
  };
  run({});
  if (j.plan.lean_aten && j.res.record.status == sandbox::Status::RE) {
    plan_with_real_aten_includes(j);
    j.res.notes.push_back(
        "the source's own ATen includes: the build that read the lean <torch/extension.h> for them failed, so it was built again with the "
        "real headers");
    run({});
  }
  if (j.op.kind == Kind::Cuda && j.res.record.status == sandbox::Status::RE && lacks_aten_name(read_log(j.work / "unit.log"))) {
    j.res.notes.push_back("all of ATen: the lean <torch/extension.h> lacked a name the unit uses, so it was built again with ATen/ATen.h");
    run({"full"});
  }
  j.res.notes.insert(j.res.notes.end(), j.plan.notes.begin(), j.plan.notes.end());
  j.res.steps = read_steps((j.work / kStepsFile).string());
  std::error_code ec;
  for (const auto& [file, note] : j.plan.notes_if_file)
    if (fs::exists(j.work / file, ec)) j.res.notes.push_back(note);
}

// 6. diagnostics, paths shown relative to the submission; returns the compiler's output with
// the build folder's paths taken out
std::string diagnose(Job& j) {
  std::string out;
  for (const auto& l : j.plan.logs) out += read_log(j.work / l);
  out += j.res.record.stderr_text + j.res.record.stdout_text;
  out = replace_all(out, j.work.string() + "/", "");
  for (const auto& f : j.files) out = replace_path(out, "src/" + f.name, j.shown_dir + "/" + f.name);
  j.res.diagnostics = parse_diagnostics(out, j.root + "/");
  j.res.log = replace_all(out, j.root + "/", "");
  return out;
}

// Why the compile step failed, "" when it wrote the artifact.
std::string compile_failure(Job& j, const std::string& out) {
  std::error_code ec;
  if (j.res.record.status == sandbox::Status::RE) {
    if (!j.expected.empty() && (out.find(glue::kExpectedMarker) != std::string::npos || out.find("kg_entry") != std::string::npos))
      j.res.diagnostics.push_back({j.shown_dir + "/" + j.src_name, 0, 0, "note", "expected signature: " + j.expected});
    return summarize_failure(j.res, j.expected);
  }
  if (j.res.record.status != sandbox::Status::OK)
    return std::string("compiler ") + sandbox::status_name(j.res.record.status) + ": " + j.res.record.message;
  if (!fs::exists(j.work / j.plan.artifact, ec)) return "compiler succeeded but wrote no artifact";
  return "";
}

// nvrtc: the lowered names of name expressions, as NVRTC reported them (checked: identifiers
// only), written into the build's launch table. Returns why not, or "".
std::string record_lowered_names(Job& j) {
  std::ifstream names(j.work / "names.txt");
  std::string line;
  while (std::getline(names, line)) {
    auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    std::string expr = line.substr(0, tab), lowered = line.substr(tab + 1);
    bool ok = !lowered.empty() && lowered.size() < 1024;
    for (char c : lowered) ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
    if (!ok) return "kg-nvrtc reported a malformed lowered name for " + expr;
    for (auto& l : j.table.launches) l.lowered[expr] = lowered;
  }
  write_file((j.work / "launch.txt").string(), launch::to_text(j.table));
  return "";
}

void take_artifact_from(Job& j, const fs::path& dir) {
  j.res.ok = true;
  j.res.artifact = (dir / j.plan.artifact).string();
  if (j.op.kind == Kind::Nvrtc) j.res.launch_file = (dir / "launch.txt").string();
}

// 7. publish: the artifact moves into the cache (atomic rename), unless the cache is off or the
// output is over its per-artifact limit (used once from the build folder). Returns why not, or "".
std::string publish(Job& j) {
  if (!j.options.use_cache) {
    take_artifact_from(j, j.work);
    return "";
  }
  std::error_code ec;
  uint64_t output_bytes = 0;
  for (const auto& f : j.plan.outputs) output_bytes += fs::file_size(j.work / f, ec);
  if (output_bytes > j.options.cache_artifact_max_bytes) {
    take_artifact_from(j, j.work);
    j.res.uncached_dir = j.work.string();
    j.res.notes.push_back("not cached: the build output is " + std::to_string(output_bytes >> 20) + " MiB, over the cache's limit of " +
                          std::to_string(j.options.cache_artifact_max_bytes >> 20) +
                          " MiB per artifact (limits.cache_artifact_mb); used once, then removed");
    return "";
  }
  try {
    const uint64_t cap = j.options.cache_max_bytes ? j.options.cache_max_bytes : cache::default_max_bytes();
    cache::Entry e = cache::publish(j.cache_dir, j.res.cache_key, j.work.string(), j.plan.outputs, cap);
    take_artifact_from(j, e.dir);
  } catch (const std::exception& e) { return std::string("build cache: ") + e.what(); }
  return "";
}

void run_steps(Job& j) {
  if (std::string why = kind_unavailable(j.op.kind); !why.empty()) {
    j.res.error = why;
    return;
  }
  name_paths(j);
  if (!resolve_signature(j) || !read_sources(j) || !plan_build(j) || !look_up_cache(j) || !make_work_dir(j)) return;
  if (j.op.kind == Kind::Python) {
    // Nothing to compile: the checked source, written by make_work_dir, is the artifact.
    j.res.record.status = sandbox::Status::OK;
    if (std::string error = publish(j); !error.empty()) {
      j.res.error = error;
      std::error_code ec;
      if (j.options.use_cache) remove_tree(fs::path(j.work).string(), ec);
    }
    return;
  }
  compile(j);
  const std::string out = diagnose(j);
  std::string error = compile_failure(j, out);
  if (error.empty() && j.op.kind == Kind::Nvrtc) error = record_lowered_names(j);
  if (error.empty()) error = publish(j);
  if (!error.empty()) {
    // A failed build's folder under the cache's tmp/ goes with it.
    j.res.error = error;
    std::error_code ec;
    if (j.options.use_cache) remove_tree(fs::path(j.work).string(), ec);
  }
}

BuildResult finish(Job& job, std::chrono::steady_clock::time_point t0) {
  BuildResult& res = job.res;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (res.diagnostics.size() > kMaxDiagnostics) res.diagnostics.resize(kMaxDiagnostics);
  if (res.log.size() > kMaxBuildLog) res.log = res.log.substr(0, kMaxBuildLog) + "\n[log truncated]\n";
  return std::move(res);
}

}  // namespace

BuildResult build(const OpFolder& op, const BuildOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  Job job(op, options);
  run_steps(job);
  return finish(job, t0);
}

BuildResult build_inline_extension(const InlineExtension& ext, const BuildOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  OpFolder stand_in;
  stand_in.op = "load_inline:" + ext.name;
  stand_in.folder = "kgext-" + inline_extension_key(ext);
  stand_in.kind = ext.cuda_sources.empty() ? Kind::Cpu : Kind::Cuda;
  Job job(stand_in, options);
  job.ext = &ext;
  run_steps(job);
  // The flags not applied are said on a cache hit too: they are the source's, not the build's.
  if (job.res.cache_hit) {
    const InlineFlags flags = inline_flags(ext);
    job.res.notes.insert(job.res.notes.end(), flags.notes.begin(), flags.notes.end());
  }
  return finish(job, t0);
}

void remove_uncached(const BuildResult& built) {
  if (built.uncached_dir.empty()) return;
  std::error_code ec;
  remove_tree(built.uncached_dir, ec);
}

std::string linker_complaint(const std::string& log) { return first_linker_complaint(log); }

std::vector<std::string> undefined_references(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    for (const char* what : {"undefined reference to symbol ", "undefined reference to ", "undefined symbol: "}) {
      const size_t at = line.find(what);
      if (at == std::string::npos) continue;
      std::string name = trim(line.substr(at + std::string(what).size()));
      if (!name.empty() && (name[0] == '\'' || name[0] == '`')) name = name.substr(1, name.find('\'', 1) - 1);
      name = name.substr(0, name.find('@'));
      if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
      break;
    }
  }
  return out;
}

std::vector<Diagnostic> parse_diagnostics(const std::string& text, const std::string& strip_prefix) {
  std::vector<Diagnostic> out;
  std::istringstream in(text);
  std::string line;
  auto all_digits = [](const std::string& s) {
    return !s.empty() && s.size() < 9 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  auto severity_of = [](std::string s) {
    s = trim(s.substr(0, s.find(" #")));  // EDG numbers its diagnostics: "warning #177-D"
    if (s == "fatal error" || s == "catastrophic error") return std::string("error");
    if (s == "error" || s == "warning" || s == "note" || s == "remark") return s;
    return std::string();
  };
  while (std::getline(in, line) && out.size() < kMaxDiagnostics) {
    Diagnostic d;
    size_t msg_at = std::string::npos;
    // EDG (nvcc front end, NVRTC): file(line): severity: message
    size_t lp = line.find('(');
    size_t rp = lp == std::string::npos ? lp : line.find("): ", lp);
    if (lp != std::string::npos && lp > 0 && rp != std::string::npos && all_digits(line.substr(lp + 1, rp - lp - 1))) {
      size_t colon = line.find(':', rp + 3);
      if (colon != std::string::npos) {
        d.severity = severity_of(line.substr(rp + 3, colon - rp - 3));
        if (!d.severity.empty()) {
          d.file = line.substr(0, lp);
          d.line = std::stoi(line.substr(lp + 1, rp - lp - 1));
          msg_at = colon + 1;
        }
      }
    }
    if (msg_at == std::string::npos) {
      // gcc: file:line:col: severity: message
      size_t p1 = line.find(':');
      if (p1 == std::string::npos || p1 == 0) continue;
      size_t p2 = line.find(':', p1 + 1);
      size_t p3 = p2 == std::string::npos ? p2 : line.find(':', p2 + 1);
      size_t p4 = p3 == std::string::npos ? p3 : line.find(':', p3 + 1);
      if (p4 == std::string::npos) continue;
      std::string ln = line.substr(p1 + 1, p2 - p1 - 1), col = line.substr(p2 + 1, p3 - p2 - 1);
      if (!all_digits(ln) || !all_digits(col)) continue;
      d.severity = severity_of(line.substr(p3 + 1, p4 - p3 - 1));
      if (d.severity.empty()) continue;
      d.file = line.substr(0, p1);
      d.line = std::stoi(ln);
      d.column = std::stoi(col);
      msg_at = p4 + 1;
    }
    if (!strip_prefix.empty() && d.file.rfind(strip_prefix, 0) == 0) d.file = d.file.substr(strip_prefix.size());
    d.message = trim(line.substr(msg_at)).substr(0, 2000);
    out.push_back(d);
  }
  return out;
}

LoadRequest load_request(const OpFolder& op, const BuildResult& built, Device device) {
  LoadRequest r;
  r.artifact = built.artifact;
  r.registered_op = std::string(kRegistryNamespace) + "::" + op.folder;
  r.aten_op = op.op;
  r.kind = op.kind;
  r.device = device;
  return r;
}

}  // namespace kg::loader

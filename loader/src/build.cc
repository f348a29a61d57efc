// Building a submission's op folder: registration glue + the compiler, inside the sandbox's
// compile profile, through the content-addressed cache.
//
//   build()  1. resolves the overload's schema and the C++ signature it implies
//            2. reads the op folder's files (their bytes are what is compiled and what is hashed)
//            3. generates the glue (glue.h) or, for nvrtc, parses the launch table (launch.h)
//            4. computes the cache key; a valid cache entry ends the build here
//            5. runs the kind's compile steps in the sandbox, in a fresh folder under the cache's tmp/
//            6. turns compiler output into diagnostics relative to the submission
//            7. publishes the artifact into the cache (atomic rename) and returns its path; an
//               artifact over BuildOptions::cache_artifact_max_bytes is used once, not cached
#include "cache.h"
#include "digest_index.h"
#include "glue.h"
#include "kernelgate/launch.h"
#include "kernelgate/loader.h"
#include "kg_build_config.h"
#include "nvcc_pipeline.h"
#include "pp_splice.h"
#include "sha256.h"
#include "submission_files.h"
#include "toolchain.h"
#include "util.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

namespace fs = std::filesystem;

namespace kg::loader {
namespace {

constexpr size_t kMaxFolderFiles = 64;
constexpr uintmax_t kMaxFolderBytes = 16u << 20;
constexpr const char* kKeyVersion = "kernelgate-build-key 2";
constexpr const char* kStepsFile = "steps.txt";  // the cuda build script's "name-start|name-end seconds" marks

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
    if (entries.size() > kMaxFolderFiles) throw submission::FileError(op.folder + ": more than " + std::to_string(kMaxFolderFiles) + " files");
    if (listed > kMaxFolderBytes)
      throw submission::FileError(op.folder + ": files of " + std::to_string(listed) + " bytes in all, over the 16 MiB an op folder may hold");
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
    line = link.empty() ? "compilation failed" : "link failed: " + link;
    entry_missing = link.rfind("undefined reference to", 0) == 0 && link.substr(0, link.find(" (in ")).find("_kernel_impl") != std::string::npos;
  }
  if (!expected.empty() && (entry_missing || res.log.find(glue::kExpectedMarker) != std::string::npos || res.log.find("kg_entry") != std::string::npos))
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
    if (before == '\n' || before == ' ' || before == '\t' || before == '"' || before == '\'' || before == '(' || before == '`')
      out += to;
    else
      out += from;
    pos = hit + from.size();
  }
  out.append(text, pos, std::string::npos);
  return out;
}

std::string sh_line(const std::vector<std::string>& argv) {
  std::string o;
  for (const auto& a : argv) o += (o.empty() ? "" : " ") + sh_quote(a);
  return o;
}

struct Plan {
  std::vector<std::pair<std::string, std::string>> generated;  // name -> text, written beside src/
  std::vector<std::string> argv;                                // one sandboxed command
  std::vector<std::string> ro;                                  // extra read-only binds
  std::vector<std::string> logs;                                // step logs to read back (in order)
  std::vector<std::string> outputs;                             // files that make the artifact
  std::string artifact;                                         // the one the runner loads
  std::string key_text;                                         // what else goes into the key
  std::vector<std::string> notes;                               // how it will build (BuildResult::notes)
  std::vector<std::string> rejected;                            // toolchain cache entries found altered and rebuilt
  // A file the script leaves when a step took its fast path -> the note that says so.
  std::vector<std::pair<std::string, std::string>> notes_if_file;
};

Plan plan_cpu(const OpFolder& op, const c10::FunctionSchema& schema, const Signature& sig, const std::string& src_name,
              const BuildOptions& options) {
  Plan p;
  p.generated.push_back({"kg_glue.cc", glue::cpu_unit(op, schema, sig, "src/" + src_name)});
  p.artifact = op.folder + ".so";
  p.argv = {KG_CXX_COMPILER};
  for (const auto& f : toolchain::cxx_flags()) p.argv.push_back(f);
  std::string rejected;
  std::string prelude = toolchain::prelude_dir(options, &rejected);
  if (!rejected.empty()) p.rejected.push_back(rejected);
  if (!prelude.empty()) {
    p.ro.push_back(prelude);
    p.argv.insert(p.argv.end(), {"-include", prelude + "/kg_prelude.h"});
  }
  p.argv.insert(p.argv.end(), {"-shared", "kg_glue.cc", "-o", p.artifact});
  for (const auto& f : toolchain::link_flags(false)) p.argv.push_back(f);
  p.outputs = {p.artifact};
  p.key_text = "prelude " + (prelude.empty() ? std::string("none") : toolchain::recorded_digest(prelude));
  return p;
}

// The build script's marks as (step, seconds), in the order the steps started, then "script":
// its first mark to its last. A mark without its pair, or a line that is not one, is skipped.
std::vector<std::pair<std::string, double>> read_steps(const std::string& path) {
  std::string text;
  std::vector<std::pair<std::string, double>> out;
  if (!read_file(path, &text) || text.size() > 64 * 1024) return out;
  std::vector<std::pair<std::string, double>> starts;
  std::map<std::string, double> ends;
  double first = 0, last = 0;
  std::istringstream in(text);
  std::string name;
  double t;
  while (in >> name >> t) {
    first = first == 0 ? t : std::min(first, t);
    last = std::max(last, t);
    auto dash = name.rfind('-');
    if (dash == std::string::npos) continue;
    const std::string step = name.substr(0, dash), edge = name.substr(dash + 1);
    if (edge == "start") starts.push_back({step, t});
    else if (edge == "end") ends[step] = t;
  }
  for (const auto& [step, t0] : starts)
    if (step != "script" && ends.count(step) && ends[step] >= t0) out.push_back({step, ends[step] - t0});
  if (last > first) out.push_back({"script", last - first});
  return out;
}

// Each chain's preprocess reads only the rest of the unit (kg_unit_rest.cu) when that chain's
// prefix is kept preprocessed (pp_splice.h), and the whole unit when the join is refused or the
// unit is built with all of ATen. Returns the script's kg_splice function ("" when no chain joins).
std::string splice_preprocess(nvcc::Pipeline& pipe, const toolchain::HostPrefix& hp, const std::string& unit, Plan& p) {
  const std::string prefix = glue::cuda_unit_prefix();
  const size_t prefix_lines = static_cast<size_t>(std::count(prefix.begin(), prefix.end(), '\n'));
  bool any = false;
  for (auto [chain, steps, kept] : {std::make_tuple(std::string("host"), &pipe.host, hp.host_pp),
                                    std::make_tuple(std::string("device"), &pipe.device, hp.device_pp)}) {
    if (!kept) continue;
    for (auto& step : *steps) {
      const std::string output = nvcc::output_of(step), rest = "kg_unit_rest." + chain + ".ii";
      const std::string rest_cmd = splice::rest_command(step, *kept, rest);  // "" for a step that is not a preprocess
      if (rest_cmd.empty() || output.empty()) continue;
      step = "{ [ -z \"$ATEN\" ] && " + rest_cmd + " 2>/dev/null && kg_splice " + rest + " " + sh_quote(kept->text) + " " +
             sh_quote(kept->once) + " " + sh_quote(output) + " && echo joined > pp-" + chain + ".txt; } || " + step;
      p.notes_if_file.push_back({"pp-" + chain + ".txt", "prefix preprocessed once: the " + chain + " chain preprocessed only the submission's part"});
      any = true;
    }
  }
  if (!any) return "";
  p.generated.push_back({"kg_unit_rest.cu", splice::rest_unit(unit, prefix_lines, "kg_unit.cu")});
  return splice::shell_function(prefix_lines, "kg_unit.cu");
}

// cuda: nvcc compiles the submission's unit while g++ compiles the registration against the
// precompiled prelude (in parallel), then g++ links. One sandboxed /bin/sh runs the steps. nvcc's
// own steps run as two parallel chains when its dry run has the expected shape (nvcc_pipeline.h),
// else nvcc runs whole. `sh kg_build.sh full` builds the unit against all of ATen (see the shim
// in shim.cc); build() retries that way when the lean unit lacks a name. With the chains, the host
// compile reads only the submission's part of cudafe++'s output when the rest is the precompiled
// host prefix's bytes (toolchain::cuda_host_prefix): every unit starts with the same includes.
Plan plan_cuda(const OpFolder& op, const c10::FunctionSchema& schema, const Signature& sig, const std::string& src_name,
               const std::string& arch, const BuildOptions& options) {
  Plan p;
  const std::string unit = glue::cuda_unit(op, sig, "src/" + src_name);
  p.generated.push_back({"kg_unit.cu", unit});
  p.generated.push_back({"kg_glue.cc", glue::cuda_registration(op, schema, sig)});
  p.artifact = op.folder + ".so";
  std::vector<std::string> nvcc = {KG_NVCC};
  for (const auto& f : toolchain::nvcc_flags(arch)) nvcc.push_back(f);
  nvcc.insert(nvcc.end(), {"-c", "kg_unit.cu", "-o", "kg_unit.o"});
  p.ro.push_back(toolchain::shim_dir());  // <torch/extension.h> without Python
  std::vector<std::string> cxx = {KG_CXX_COMPILER};
  for (const auto& f : toolchain::cxx_flags()) cxx.push_back(f);
  std::string rejected;
  std::string prelude = toolchain::prelude_dir(options, &rejected);
  if (!rejected.empty()) p.rejected.push_back(rejected);
  if (!prelude.empty()) {
    p.ro.push_back(prelude);
    cxx.insert(cxx.end(), {"-include", prelude + "/kg_prelude.h"});
  }
  cxx.insert(cxx.end(), {"-c", "kg_glue.cc", "-o", "kg_glue.o"});
  std::vector<std::string> link = {KG_CXX_COMPILER, "-shared", "kg_unit.o", "kg_glue.o", "-o", p.artifact};
  for (const auto& f : toolchain::link_flags(true)) link.push_back(f);

  std::string why = "BuildOptions::nvcc_whole";
  std::optional<nvcc::Pipeline> pipe;
  rejected.clear();
  if (!options.nvcc_whole) pipe = nvcc::parse_dryrun(toolchain::nvcc_dryrun(arch, options, &rejected), "$ATEN", &why);
  if (!rejected.empty()) p.rejected.push_back(rejected);
  // One module id for every unit (the prefix's output names it); each artifact is loaded on its own
  // (RTLD_LOCAL), and the id only has to agree between cudafe++ and cicc of one unit.
  const std::string module_id = nvcc::module_id("kernelgate cuda unit");
  std::string host_prefix_step, splice_function, host_prefix_digest;
  if (pipe) {
    rejected.clear();
    auto hp = toolchain::cuda_host_prefix(*pipe, glue::cuda_unit_prefix(), module_id, arch, options, &rejected);
    if (!rejected.empty()) p.rejected.push_back(rejected);
    if (hp) {
      splice_function = splice_preprocess(*pipe, *hp, unit, p);
      p.ro.push_back(hp->dir);
      host_prefix_digest = "host prefix " + toolchain::recorded_digest(hp->dir);
      const std::string src = pipe->host_source, header = sh_quote(hp->header);
      host_prefix_step = " && { ! cmp -s -n " + std::to_string(hp->bytes) + " " + header + " " + src + " || { { printf '#include \"%s\"\\n' " +
                         header + "; tail -c +" + std::to_string(hp->bytes + 1) + " " + src + "; } > " + src + ".rest && mv " + src + ".rest " +
                         src + " && echo precompiled > host-prefix.txt; }; }";
      p.notes_if_file.push_back({"host-prefix.txt", "host prefix precompiled: the host compile read only the submission's part"});
    }
  }
  std::ostringstream sh;
  sh << "# kernelgate cuda-kind build (generated)\n"
     << "ATEN=\"\"; [ \"${1:-}\" = full ] && ATEN=-DKG_FULL_ATEN=1\n"
     << "# each step's start and end, for BuildResult::steps\n"
     << "mark() { echo \"$1 $(date +%s.%N 2>/dev/null)\" >> " << kStepsFile << "; }\n"
     << "mark script-start\n"
     << "( mark glue-start; " << sh_line(cxx) << " > glue.log 2>&1; echo $? > glue.rc; mark glue-end ) &\n";
  if (pipe) {
    // unit.log gets one chain's log: both front ends report the same source errors.
    sh << "# nvcc's steps (from nvcc --dryrun), host and device chains side by side\n";
    for (const auto& e : pipe->env) sh << "export " << e << "\n";
    sh << "printf '%s' " << sh_quote(module_id) << " > " << pipe->module_id_file << "\n" << splice_function;
    if (!host_prefix_step.empty()) sh << "# cudafe++'s output starting with the precompiled host prefix's bytes: the host compile reads the rest\n";
    sh << "( mark host-chain-start; ( " << join(pipe->host, " && ") << host_prefix_step
       << " ) > unit-host.log 2>&1; echo $? > unit-host.rc; mark host-chain-end ) &\n"
       << "mark device-chain-start\n"
       << "( " << join(pipe->device, " && ") << " ) > unit-device.log 2>&1; echo $? > unit-device.rc\n"
       << "mark device-chain-end\n"
       << "wait\n"
       << "if [ \"$(cat unit-host.rc)\" != 0 ]; then cat unit-host.log > unit.log; exit 1; fi\n"
       << "if [ \"$(cat unit-device.rc)\" != 0 ]; then cat unit-device.log > unit.log; exit 1; fi\n"
       << "mark host-compile-start\n"
       << pipe->host_compile << " > unit.log 2>&1 || exit 1\n"
       << "mark host-compile-end\n"
       << "[ \"$(cat glue.rc)\" = 0 ] || exit 1\n";
  } else {
    p.notes.push_back("nvcc whole, not its chains side by side");
    sh << "# nvcc whole (" << replace_all(why, "\n", " ") << ")\n"
       << "mark nvcc-start\n"
       << sh_line(nvcc) << " $ATEN > unit.log 2>&1; echo $? > unit.rc\n"
       << "mark nvcc-end\n"
       << "wait\n"
       << "[ \"$(cat unit.rc)\" = 0 ] && [ \"$(cat glue.rc)\" = 0 ] || exit 1\n";
  }
  sh << "mark link-start\n" << sh_line(link) << " > link.log 2>&1 || exit 1\nmark link-end\n";
  p.generated.push_back({"kg_build.sh", sh.str()});
  p.argv = {"/bin/sh", "kg_build.sh"};
  p.logs = {"unit.log", "glue.log", "link.log"};
  p.outputs = {p.artifact};
  p.key_text = "prelude " + (prelude.empty() ? std::string("none") : toolchain::recorded_digest(prelude)) + "\n" + sh.str() + "\n" + host_prefix_digest;
  return p;
}

Plan plan_nvrtc(const OpFolder& op, const launch::Table& table, const std::string& src_name, const std::string& arch) {
  Plan p;
  p.artifact = "kernel.cubin";
  p.argv = {toolchain::nvrtc_helper_path(), "--arch", arch, "--out", p.artifact, "--names", "names.txt",
            "--display", op.folder + "/" + src_name};
  for (const auto& n : table.kernel_names()) p.argv.insert(p.argv.end(), {"--name", n});
  p.argv.push_back("src/" + src_name);
  p.ro.push_back(fs::path(toolchain::nvrtc_helper_path()).parent_path().string());
  p.outputs = {p.artifact, "launch.txt"};
  p.key_text = launch::to_text(table);
  return p;
}

}  // namespace

std::string kind_unavailable(Kind kind) {
  if (kind == Kind::Cuda && !toolchain::have_nvcc()) return "the cuda kind needs nvcc, and this kernelgate was built without a CUDA toolkit";
  if (kind == Kind::Nvrtc && !toolchain::have_nvrtc_helper())
    return "the nvrtc kind needs kg-nvrtc (built only when a CUDA toolkit with NVRTC is found)";
  return "";
}

BuildResult build(const OpFolder& op, const BuildOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  BuildResult res;
  res.kind = op.kind;
  auto done = [&]() -> BuildResult& {
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (res.diagnostics.size() > kMaxDiagnostics) res.diagnostics.resize(kMaxDiagnostics);
    if (res.log.size() > kMaxBuildLog) res.log = res.log.substr(0, kMaxBuildLog) + "\n[log truncated]\n";
    return res;
  };
  if (std::string why = kind_unavailable(op.kind); !why.empty()) {
    res.error = why;
    return done();
  }
  const std::string root = options.submission_root.empty() ? fs::path(op.dir).parent_path().string() : options.submission_root;
  const std::string src_name = fs::path(op.source).filename().string();
  const std::string rel_dir = fs::path(op.dir).lexically_relative(root).string();
  const std::string shown_dir = rel_dir.empty() || rel_dir.rfind("..", 0) == 0 ? op.folder : rel_dir;

  // 1. schema and signature
  const c10::FunctionSchema* schema = nullptr;
  Signature sig;
  try {
    schema = &aten_schema(op.op);
    if (op.kind != Kind::Nvrtc) sig = cpp_signature(*schema);
  } catch (const std::exception& e) {
    res.error = e.what();
    return done();
  }
  const std::string expected = op.kind == Kind::Nvrtc ? "" : sig.declaration(op.folder + "_kernel_impl");

  // 2. the folder's bytes
  std::string err;
  std::vector<SourceFile> files = read_folder(op, &err);
  if (!err.empty()) {
    res.error = err;
    return done();
  }
  // 3. glue or launch table
  std::string arch;
  Plan plan;
  launch::Table table;
  try {
    if (op.kind != Kind::Cpu) arch = toolchain::cuda_arch(options);
    switch (op.kind) {
      case Kind::Cpu: plan = plan_cpu(op, *schema, sig, src_name, options); break;
      case Kind::Cuda: plan = plan_cuda(op, *schema, sig, src_name, arch, options); break;
      case Kind::Nvrtc: {
        std::string text;
        for (const auto& f : files)
          if (f.name == "kernelgate.toml") text = f.bytes;
        table = launch::parse_text(text, shown_dir + "/kernelgate.toml", *schema);
        plan = plan_nvrtc(op, table, src_name, arch);
        break;
      }
    }
  } catch (const launch::Error& e) {
    Diagnostic d{shown_dir + "/kernelgate.toml", e.line, e.column, "error", e.key + ": " + e.message};
    res.diagnostics.push_back(d);
    res.error = d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message;
    res.log = res.error + "\n";
    return done();
  } catch (const std::exception& e) {
    res.error = e.what();
    return done();
  }

  // 4. the cache key
  Sha256 h;
  h.field(kKeyVersion);
  h.field(kind_name(op.kind));
  h.field(op.op);
  h.field(arch);
  h.field(toolchain::identity(op.kind, arch));
  h.field(plan.key_text);
  h.field(join(plan.argv, "\n"));
  for (const auto& g : plan.generated) {
    h.field(g.first);
    h.field(g.second);
  }
  h.field("source " + src_name);
  for (const auto& f : files) {
    h.field(f.name);
    h.field(f.bytes);
  }
  res.cache_key = h.hex();
  res.notes.insert(res.notes.end(), plan.rejected.begin(), plan.rejected.end());
  std::string cache_dir;
  if (options.use_cache) {
    try {
      cache_dir = cache::root(options.cache_dir);
      cache::Entry e;
      if (cache::lookup(cache_dir, res.cache_key, &e, &res.cache_rejected)) {
        res.ok = true;
        res.cache_hit = true;
        res.artifact = (fs::path(e.dir) / plan.artifact).string();
        if (op.kind == Kind::Nvrtc) res.launch_file = (fs::path(e.dir) / "launch.txt").string();
        res.record.status = sandbox::Status::OK;
        return done();
      }
    } catch (const std::exception& e) {
      res.error = std::string("build cache: ") + e.what();
      return done();
    }
  }

  // 5. compile in a fresh folder
  fs::path work;
  std::error_code ec;
  try {
    if (options.use_cache) {
      work = cache::make_build_dir(cache_dir, res.cache_key);
    } else {
      work = fs::path(options.work_dir.empty() ? cache_root() + "/nocache" : options.work_dir) / op.folder;
      remove_tree(fs::path(work).string(), ec);
      fs::create_directories(work / "src", ec);
      if (ec) throw std::runtime_error("cannot create " + work.string() + ": " + ec.message());
    }
    if (digest_index::reachable_from(work.string()))
      throw std::runtime_error(work.string() + ": the build folder would contain kernelgate's cache index; choose a work folder outside the cache");
    fs::create_directories(work / "src", ec);
    for (const auto& f : files) write_file((work / "src" / f.name).string(), f.bytes);
    for (const auto& g : plan.generated) write_file((work / g.first).string(), g.second);
  } catch (const std::exception& e) {
    res.error = e.what();
    return done();
  }
  std::vector<std::string> ro = toolchain::binds(op.kind != Kind::Nvrtc);
  ro.insert(ro.end(), plan.ro.begin(), plan.ro.end());
  res.record = sandbox::run(toolchain::compile_spec(plan.argv, ro, work.string(), options));
  if (op.kind == Kind::Cuda && res.record.status == sandbox::Status::RE) {
    // The lean <torch/extension.h> lacks a name the unit uses: build once more with all of ATen.
    std::string unit = read_log(work / "unit.log");
    // EDG: namespace "at" has no member "x", identifier "AT_CUDA_CHECK" is undefined; gcc: 'x' is
    // not a member of 'at'. The identifiers: macros and types of ATen and of the CUDA libraries
    // the full set includes (cuBLAS, cuSPARSE, cuSOLVER).
    bool missing = false;
    for (const char* ns : {"namespace \"at", "namespace \"torch", "namespace \"c10", "member of 'at", "member of 'torch", "member of 'c10",
                           "identifier \"AT_", "identifier \"C10_", "identifier \"TORCH_", "identifier \"cublas", "identifier \"CUBLAS",
                           "identifier \"cusparse", "identifier \"CUSPARSE", "identifier \"cusolver", "identifier \"CUSOLVER"})
      missing |= unit.find(ns) != std::string::npos;
    if (missing) {
      std::vector<std::string> argv = plan.argv;
      argv.push_back("full");
      res.notes.push_back("all of ATen: the lean <torch/extension.h> lacked a name the unit uses, so it was built again with ATen/ATen.h");
      res.record = sandbox::run(toolchain::compile_spec(argv, ro, work.string(), options));
    }
  }
  res.notes.insert(res.notes.end(), plan.notes.begin(), plan.notes.end());
  res.steps = read_steps((work / kStepsFile).string());
  for (const auto& [file, note] : plan.notes_if_file)
    if (fs::exists(work / file, ec)) res.notes.push_back(note);

  // 6. diagnostics, paths shown relative to the submission
  std::string out;
  for (const auto& l : plan.logs) out += read_log(work / l);
  out += res.record.stderr_text + res.record.stdout_text;
  out = replace_all(out, work.string() + "/", "");
  for (const auto& f : files) out = replace_path(out, "src/" + f.name, shown_dir + "/" + f.name);
  res.diagnostics = parse_diagnostics(out, root + "/");
  res.log = replace_all(out, root + "/", "");
  auto fail = [&](const std::string& why) -> BuildResult& {
    res.error = why;
    if (options.use_cache) remove_tree(fs::path(work).string(), ec);
    return done();
  };
  if (res.record.status != sandbox::Status::OK) {
    if (res.record.status == sandbox::Status::RE) {
      if (!expected.empty() && (out.find(glue::kExpectedMarker) != std::string::npos || out.find("kg_entry") != std::string::npos))
        res.diagnostics.push_back({shown_dir + "/" + src_name, 0, 0, "note", "expected signature: " + expected});
      return fail(summarize_failure(res, expected));
    }
    return fail(std::string("compiler ") + sandbox::status_name(res.record.status) + ": " + res.record.message);
  }
  if (!fs::exists(work / plan.artifact, ec)) return fail("compiler succeeded but wrote no artifact");
  if (op.kind == Kind::Nvrtc) {
    // Lowered names of name expressions, as NVRTC reported them (checked: identifiers only).
    std::ifstream names(work / "names.txt");
    std::string line;
    while (std::getline(names, line)) {
      auto tab = line.find('\t');
      if (tab == std::string::npos) continue;
      std::string expr = line.substr(0, tab), lowered = line.substr(tab + 1);
      bool ok = !lowered.empty() && lowered.size() < 1024;
      for (char c : lowered) ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
      if (!ok) return fail("kg-nvrtc reported a malformed lowered name for " + expr);
      for (auto& l : table.launches) l.lowered[expr] = lowered;
    }
    write_file((work / "launch.txt").string(), launch::to_text(table));
  }

  // 7. publish
  if (!options.use_cache) {
    res.ok = true;
    res.artifact = (work / plan.artifact).string();
    if (op.kind == Kind::Nvrtc) res.launch_file = (work / "launch.txt").string();
    return done();
  }
  uint64_t output_bytes = 0;
  for (const auto& f : plan.outputs) output_bytes += fs::file_size(work / f, ec);
  if (output_bytes > options.cache_artifact_max_bytes) {
    res.ok = true;
    res.uncached_dir = work.string();
    res.artifact = (work / plan.artifact).string();
    if (op.kind == Kind::Nvrtc) res.launch_file = (work / "launch.txt").string();
    res.notes.push_back("not cached: the build output is " + std::to_string(output_bytes >> 20) + " MiB, over the cache's limit of " +
                        std::to_string(options.cache_artifact_max_bytes >> 20) + " MiB per artifact (limits.cache_artifact_mb); used once, then removed");
    return done();
  }
  try {
    const uint64_t cap = options.cache_max_bytes ? options.cache_max_bytes : cache::default_max_bytes();
    cache::Entry e = cache::publish(cache_dir, res.cache_key, work.string(), plan.outputs, cap);
    res.ok = true;
    res.artifact = (fs::path(e.dir) / plan.artifact).string();
    if (op.kind == Kind::Nvrtc) res.launch_file = (fs::path(e.dir) / "launch.txt").string();
  } catch (const std::exception& e) {
    return fail(std::string("build cache: ") + e.what());
  }
  return done();
}

void remove_uncached(const BuildResult& built) {
  if (built.uncached_dir.empty()) return;
  std::error_code ec;
  remove_tree(built.uncached_dir, ec);
}

std::string linker_complaint(const std::string& log) { return first_linker_complaint(log); }

std::vector<Diagnostic> parse_diagnostics(const std::string& text, const std::string& strip_prefix) {
  std::vector<Diagnostic> out;
  std::istringstream in(text);
  std::string line;
  auto all_digits = [](const std::string& s) { return !s.empty() && s.size() < 9 && s.find_first_not_of("0123456789") == std::string::npos; };
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

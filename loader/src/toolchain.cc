#include "toolchain.h"

#include "build_includes.h"
#include "digest_index.h"
#include "kg_build_config.h"
#include "pp_splice.h"
#include "kernelgate/sha256.h"
#include "shim.h"
#include "util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kg::loader::toolchain {
namespace {

std::string file_identity(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return path + ":missing";
  return path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtime);
}

// The toolchain entries' digests (digest_index.h): cache_root()/index, bound into no box.
std::string entry_index() { return cache_root() + "/index"; }

// Whether `dir` is an entry kernelgate built and recorded, unaltered since. An altered or
// unrecorded one is removed and `*rejected` says so; an absent one is simply not there.
bool verified(const fs::path& dir, const std::string& what, std::string* rejected) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return false;
  const std::string why =
      S_ISDIR(st.st_mode) ? digest_index::check(entry_index(), dir.filename().string(), dir.string()) : "not a directory";
  if (why.empty()) return true;
  std::fprintf(stderr, "kernelgate: warning: %s %s does not match the digests kernelgate recorded (%s): rebuilding it\n", what.c_str(),
               dir.c_str(), why.c_str());
  if (rejected) *rejected = what + " " + dir.filename().string() + " rejected (" + why + "): rebuilt";
  std::error_code ec;
  const fs::path trash = dir.string() + ".trash" + std::to_string(::getpid());
  fs::rename(dir, trash, ec);
  remove_tree((ec ? dir : trash).string(), ec);
  return false;
}

// Records the finished folder `tmp`'s digests under dest's name, then renames it onto `dest`;
// when another process published a valid entry first, that one stays and `tmp` goes.
void publish_entry(const fs::path& tmp, const fs::path& dest, const std::string& what) {
  const digest_index::Listing listing = digest_index::take(tmp.string());
  digest_index::Lock lock(entry_index());
  std::error_code ec;
  if (verified(dest, what, nullptr)) {
    remove_tree(tmp.string(), ec);
    return;
  }
  digest_index::record(entry_index(), dest.filename().string(), listing);
  fs::rename(tmp, dest, ec);
  if (ec) {
    digest_index::forget(entry_index(), dest.filename().string());
    const std::string why = ec.message();
    remove_tree(tmp.string(), ec);
    throw std::runtime_error("cannot publish " + dest.string() + ": " + why);
  }
}

// The header paths of a make-style dependency file (`g++ -MD`): every absolute path after the target.
std::vector<std::string> dependency_paths(const std::string& deps) {
  std::vector<std::string> out;
  std::istringstream in(deps);
  std::string word;
  while (in >> word)
    if (word[0] == '/' && word.back() != ':') out.push_back(word);
  return out;
}

// A cuda prefix folder's covered.txt: the headers its host preprocess (step 1, in `dir`) entered.
void write_prefix_covered(const fs::path& dir, const nvcc::Pipeline& pipe) {
  std::string preprocessed;
  for (const auto& step : pipe.host)
    if (nvcc::is_preprocess(step) && read_file((dir / nvcc::output_of(step)).string(), &preprocessed)) break;
  write_file((dir / includes::kCoveredFile).string(),
             join(includes::include_names(splice::entered_files(preprocessed), {shim_dir()}), "\n") + "\n");
}

}  // namespace

std::string recorded_digest(const std::string& dir) {
  std::string text;
  if (!read_file(entry_index() + "/" + fs::path(dir).filename().string(), &text)) return "none";
  return digest::sha256_hex(text);
}

std::vector<std::string> torch_include_dirs() {
  // `-isystem /usr/include` would break the C++ library's #include_next <stdlib.h>.
  std::vector<std::string> out;
  for (const auto& d : split(KG_TORCH_INCLUDE_DIRS, ';'))
    if (!d.empty() && d != "/usr/include" && d != "/usr/local/include") out.push_back(d);
  return out;
}

std::vector<std::string> binds(bool torch) {
  std::vector<std::string> out;
  std::error_code ec;
  if (torch) {
    for (const auto& d : torch_include_dirs())
      if (fs::exists(d, ec)) out.push_back(d);
    if (fs::exists(KG_TORCH_LIB_DIR, ec)) out.push_back(KG_TORCH_LIB_DIR);
    if (std::string(KG_TORCH_EXTRA_LIB_ROOT).size() && fs::exists(KG_TORCH_EXTRA_LIB_ROOT, ec)) out.push_back(KG_TORCH_EXTRA_LIB_ROOT);
  }
  // The CUDA toolkit usually lives under /usr (bound by the profile); bind it when it does not.
  if (std::string(KG_CUDA_ROOT).size() && std::string(KG_CUDA_ROOT).rfind("/usr/", 0) != 0 && fs::exists(KG_CUDA_ROOT, ec))
    out.push_back(KG_CUDA_ROOT);
  // A compiler installed outside /usr (the GPU machine's g++ is /opt/gcc/bin/g++): its whole
  // prefix (bin, libexec with cc1plus, lib) is bound read-only.
  // When the path is a link into another prefix, both are bound.
  for (const fs::path& cxx : {fs::path(KG_CXX_COMPILER), fs::weakly_canonical(KG_CXX_COMPILER, ec)}) {
    const fs::path cxx_prefix = cxx.parent_path().parent_path();
    if (!cxx_prefix.empty() && cxx_prefix != "/usr" && cxx_prefix.string().rfind("/usr/", 0) != 0 && cxx_prefix != "/" &&
        fs::exists(cxx_prefix, ec) && std::find(out.begin(), out.end(), cxx_prefix.string()) == out.end())
      out.push_back(cxx_prefix.string());
  }
  return out;
}

std::vector<std::string> cxx_flags() {
  std::vector<std::string> f = {"-std=c++17", "-O2", "-fPIC", "-w"};
  for (const auto& flag : words(KG_TORCH_CXX_FLAGS)) f.push_back(flag);
  if (KG_TORCH_CUDA) f.push_back("-DKG_TORCH_HAS_CUDA=1");
  for (const auto& d : torch_include_dirs()) f.push_back("-isystem" + d);
  return f;
}

std::vector<std::string> nvcc_flags(const std::string& arch) {
  const std::string num = arch.substr(3);  // "90" or "90a"
  std::vector<std::string> f = {"-std=c++17", "-O3", "-ccbin", KG_CXX_COMPILER, "-Xcompiler", "-fPIC", "-w",
                                // PyTorch's cpp_extension defaults, so load_inline kernels build unchanged.
                                "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__", "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
                                "-D__CUDA_NO_HALF2_OPERATORS__", "--expt-relaxed-constexpr", "-DTORCH_API_INCLUDE_EXTENSION_H",
                                // Device code for the target plus its PTX (for a newer device of the same family).
                                "-gencode", "arch=compute_" + num + ",code=sm_" + num, "-gencode",
                                "arch=compute_" + num + ",code=compute_" + num};
  for (const auto& flag : words(KG_TORCH_CXX_FLAGS)) {
    if (flag.rfind("-D", 0) == 0) f.push_back(flag);
    else f.insert(f.end(), {"-Xcompiler", flag});
  }
  if (KG_TORCH_CUDA) f.push_back("-DKG_TORCH_HAS_CUDA=1");
  f.push_back("-I" + shim_dir());
  for (const auto& d : torch_include_dirs()) f.insert(f.end(), {"-isystem", d});
  return f;
}

std::string nvcc_dryrun_dir(const std::string& arch) {
  const std::string key =
      digest::sha256_hex(file_identity(KG_NVCC) + "\n" KG_CUDA_VERSION "\n" KG_VERSION "\n" + join(nvcc_flags(arch), "\n")).substr(0, 16);
  return (fs::path(cache_root()) / ("nvcc-dryrun-" + key)).string();
}

std::string nvcc_dryrun(const std::string& arch, const BuildOptions& options, std::string* rejected) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  const std::vector<std::string> flags = nvcc_flags(arch);
  const fs::path saved = nvcc_dryrun_dir(arch);
  const std::string key = saved.filename().string().substr(std::string("nvcc-dryrun-").size());
  std::error_code ec;
  std::string text;
  if (verified(saved, "nvcc dry run", rejected) && read_file((saved / "dryrun.txt").string(), &text)) return text;
  const fs::path tmp = fs::path(cache_root()) / ("nvcc-dryrun-" + key + ".tmp" + std::to_string(::getpid()));
  remove_tree(tmp.string(), ec);
  fs::create_directories(tmp, ec);
  std::vector<std::string> argv = {KG_NVCC};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-c", "kg_unit.cu", "-o", "kg_unit.o", "--dryrun", "--keep"});  // --keep: intermediates in the folder
  std::vector<std::string> ro = binds();
  ro.push_back(shim_dir());
  sandbox::Record r = sandbox::run(compile_spec(argv, ro, tmp.string(), options));
  remove_tree(tmp.string(), ec);
  if (r.status != sandbox::Status::OK) return "";
  text = replace_all(r.stderr_text + r.stdout_text, tmp.string() + "/", "$PWD/");
  try {
    fs::create_directories(tmp, ec);
    write_file((tmp / "dryrun.txt").string(), text);
    publish_entry(tmp, saved, "nvcc dry run");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelgate: warning: the nvcc dry run is not kept: %s\n", e.what());
    remove_tree(tmp.string(), ec);
  }
  return text;
}

std::vector<std::string> link_flags(bool cuda) {
  std::vector<std::string> f = {"-L" KG_TORCH_LIB_DIR, "-Wl,-z,defs", "-Wl,-rpath," KG_TORCH_LIB_DIR};
  const std::vector<std::string> linker = words(KG_LINKER_FLAG);
  f.insert(f.begin(), linker.begin(), linker.end());
  if (cuda && KG_TORCH_CUDA) f.insert(f.end(), {"-ltorch_cuda", "-lc10_cuda"});
  f.insert(f.end(), {"-ltorch_cpu", "-lc10"});
  if (cuda) f.insert(f.end(), {"-L" KG_CUDA_LIB_DIR, "-Wl,-rpath," KG_CUDA_LIB_DIR, "-lcudart"});
  return f;
}

std::string normalize_arch(const std::string& in) {
  std::string a = in;
  for (const char* prefix : {"sm_", "compute_"})
    if (a.rfind(prefix, 0) == 0) a = a.substr(std::string(prefix).size());
  bool ok =
      a.size() >= 2 && a.size() <= 4 && std::isdigit(static_cast<unsigned char>(a[0])) && std::isdigit(static_cast<unsigned char>(a[1]));
  for (size_t i = 2; ok && i < a.size(); ++i)
    ok = std::isdigit(static_cast<unsigned char>(a[i])) || (i == a.size() - 1 && (a[i] == 'a' || a[i] == 'f'));
  if (!ok) throw std::runtime_error("bad CUDA architecture '" + in + "' (expected e.g. sm_90)");
  return "sm_" + a;
}

std::string cuda_arch(const BuildOptions& options) {
  if (!options.cuda_arch.empty()) return normalize_arch(options.cuda_arch);
  if (const char* e = std::getenv("KERNELGATE_CUDA_ARCH"); e && *e) return normalize_arch(e);
  return "sm_90";
}

bool have_nvcc() {
  std::error_code ec;
  return std::string(KG_NVCC).size() && fs::exists(KG_NVCC, ec);
}

std::string nvrtc_helper_path() {
  if (const char* e = std::getenv("KERNELGATE_NVRTC"); e && *e) return e;
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = self.parent_path() / "kg-nvrtc";
    if (fs::exists(beside, ec)) return beside.string();
  }
  return KG_NVRTC_HELPER_PATH;
}

bool have_nvrtc_helper() {
  std::error_code ec;
  return fs::exists(nvrtc_helper_path(), ec);
}

sandbox::Spec compile_spec(const std::vector<std::string>& argv, const std::vector<std::string>& ro, const std::string& rw,
                           const BuildOptions& options) {
  sandbox::Spec spec;
  spec.profile = sandbox::Profile::Compile;
  spec.argv = argv;
  spec.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C", "LC_ALL=C"};
  for (const auto& p : ro) spec.binds.push_back({p, false});
  spec.binds.push_back({rw, true});
  spec.workdir = rw;
  spec.limits.cpu_s = options.time_s;
  spec.limits.wall_s = options.time_s * 1.5 + 5;
  spec.limits.memory_mb = options.memory_mb;
  spec.limits.max_processes = 64;
  spec.limits.max_output_bytes = 256 * 1024;
  spec.limits.scratch_mb = 1024;
  spec.limits.max_file_mb = 1024;  // the precompiled prelude alone is a few hundred MB
  spec.capture_output = true;
  return spec;
}

std::string prelude_dir(const BuildOptions& options, std::string* rejected) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::string flags = join(cxx_flags(), " ");
  std::string key = digest::sha256_hex("prelude 2 (covered.txt)\n" + flags + "\n" + file_identity(KG_CXX_COMPILER) + "\n" +
                                       KG_TORCH_VERSION + "\n" + KG_VERSION)
                        .substr(0, 16);
  fs::path dir = fs::path(cache_root()) / ("prelude-" + key);
  fs::path pch = dir / "kg_prelude.h.gch";
  std::error_code ec;
  if (verified(dir, "precompiled prelude", rejected) && fs::exists(pch, ec)) return dir.string();
  fs::path tmp = fs::path(cache_root()) / ("prelude-" + key + ".tmp" + std::to_string(::getpid()));
  remove_tree(tmp.string(), ec);
  fs::create_directories(tmp, ec);
  write_file((tmp / "kg_prelude.h").string(), "#pragma once\n#include <ATen/ATen.h>\n#include <torch/library.h>\n");
  std::vector<std::string> argv = {KG_CXX_COMPILER};
  for (const auto& f : cxx_flags()) argv.push_back(f);
  // -MD: the headers it reads, for covered.txt (includes::read_covered).
  argv.insert(argv.end(), {"-x", "c++-header", (tmp / "kg_prelude.h").string(), "-o", (tmp / "kg_prelude.h.gch").string(), "-MD", "-MF",
                           (tmp / "kg_prelude.d").string()});
  BuildOptions o = options;
  o.time_s = std::max(options.time_s, 300.0);
  sandbox::Record r = sandbox::run(compile_spec(argv, binds(), tmp.string(), o));
  if (r.status != sandbox::Status::OK) {
    remove_tree(fs::path(tmp).string(), ec);
    std::fprintf(stderr, "kernelgate: warning: building the precompiled prelude failed (%s: %s) %s\n", sandbox::status_name(r.status),
                 r.message.c_str(), r.stderr_text.substr(0, 1500).c_str());
    return "";
  }
  try {
    std::string deps;
    read_file((tmp / "kg_prelude.d").string(), &deps);
    fs::remove(tmp / "kg_prelude.d", ec);
    write_file((tmp / includes::kCoveredFile).string(), join(includes::include_names(dependency_paths(deps), {}), "\n") + "\n");
    publish_entry(tmp, dir, "precompiled prelude");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelgate: warning: the precompiled prelude is not kept: %s\n", e.what());
    return "";
  }
  return dir.string();
}

std::optional<HostPrefix> cuda_host_prefix(const nvcc::Pipeline& pipe, const std::string& unit_text, const std::string& module_id,
                                           const std::string& arch, const BuildOptions& options, std::string* rejected) {
  digest::Sha256 h;
  h.field("kernelgate host prefix 3 (covered.txt)");
  h.field(identity(Kind::Cuda, arch));
  h.field(join(pipe.env, "\n"));
  h.field(join(pipe.host, "\n"));
  h.field(pipe.host_compile);
  h.field(unit_text);
  h.field(module_id);
  const std::string key = h.hex().substr(0, 16);
  // One lock per prefix: distinct prefixes (a warm-up's, or a batch's sources with different
  // headers) build side by side, and a second build of the same one waits for the first.
  static std::mutex table_mu;
  static std::map<std::string, std::unique_ptr<std::mutex>> key_mu;
  static std::set<std::string> failed;  // tried once per process: a failure is not retried per build
  std::unique_lock<std::mutex> table(table_mu);
  std::unique_ptr<std::mutex>& mine = key_mu[key];
  if (!mine) mine = std::make_unique<std::mutex>();
  std::mutex& entry_mu = *mine;
  table.unlock();
  std::lock_guard<std::mutex> lock(entry_mu);
  auto has_failed = [&] {
    std::lock_guard<std::mutex> l(table_mu);
    return failed.count(key) > 0;
  };
  const fs::path dir = fs::path(cache_root()) / ("cuda-prefix-" + key);
  HostPrefix hp{dir.string(), (dir / "kg_host_prefix.h").string(), 0};
  std::error_code ec;
  // The header is #included by its path from the build script's cudafe++ output.
  for (char c : hp.header)
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("/._-+", c)) return std::nullopt;
  if (has_failed()) return std::nullopt;
  auto with_splices = [&]() -> std::optional<HostPrefix> {
    hp.host_pp = splice::find(dir.string(), "host");
    hp.device_pp = splice::find(dir.string(), "device");
    return hp;
  };
  if (verified(dir, "cuda host prefix", rejected) && fs::exists(dir / "kg_host_prefix.h.gch", ec)) {
    hp.bytes = fs::file_size(hp.header, ec);
    if (!ec && hp.bytes > 0) return with_splices();
  }
  auto give_up = [&](const fs::path& tmp, const std::string& why) -> std::optional<HostPrefix> {
    remove_tree(tmp.string(), ec);
    {
      std::lock_guard<std::mutex> l(table_mu);
      failed.insert(key);
    }
    std::fprintf(stderr,
                 "kernelgate: warning: building the cuda kind's precompiled host prefix failed (%s); cuda builds compile it whole\n",
                 why.substr(0, 1500).c_str());
    return std::nullopt;
  };
  const fs::path tmp = fs::path(cache_root()) / ("cuda-prefix-" + key + ".tmp" + std::to_string(::getpid()));
  remove_tree(tmp.string(), ec);
  fs::create_directories(tmp, ec);
  const std::string pch_cmd = nvcc::precompile_command(pipe, "kg_host_prefix.h", "kg_host_prefix.h.gch");
  if (pch_cmd.empty()) return give_up(tmp, "the host compile has no words to rewrite: " + pipe.host_compile.substr(0, 200));
  std::string env;
  for (const auto& e : pipe.env) env += "export " + e + "\n";
  BuildOptions o = options;
  o.time_s = std::max(options.time_s, 300.0);
  std::vector<std::string> ro = binds();
  ro.push_back(shim_dir());
  auto run_script = [&](const std::string& name, const std::string& text) {
    write_file((tmp / name).string(), text);
    return sandbox::run(compile_spec({"/bin/sh", name}, ro, tmp.string(), o));
  };
  try {
    // 1. kernelgate's unit through nvcc's host chain (preprocess, cudafe++)
    write_file((tmp / "kg_unit.cu").string(), unit_text);
    sandbox::Record r = run_script("kg_prefix.sh", env + "ATEN=\"\"\nprintf '%s' " + sh_quote(module_id) + " > " + pipe.module_id_file +
                                                       "\n" + join(pipe.host, " && ") + "\n");
    if (r.status != sandbox::Status::OK)
      return give_up(tmp, std::string("host chain: ") + sandbox::status_name(r.status) + " " + r.stderr_text);
    // 2. its output up to the stub's include, which is where a submission's part begins
    std::string text;
    const bool read = read_file((tmp / pipe.host_source).string(), &text);
    const size_t at = text.find("\n# 1 \"" + pipe.stub_file + "\"\n");
    if (!read || at == std::string::npos) return give_up(tmp, "no stub include in cudafe++'s output");
    text.resize(at + 1);
    while (text.size() >= 2 && text[text.size() - 2] == '\n') text.pop_back();
    write_file((tmp / "kg_host_prefix.h").string(), text);
    write_prefix_covered(tmp, pipe);
    // 3. precompiled with the host compile's flags
    r = run_script("kg_pch.sh", env + pch_cmd + "\n");
    if (r.status != sandbox::Status::OK)
      return give_up(tmp, std::string("precompile: ") + sandbox::status_name(r.status) + " " + r.stderr_text);
    for (const auto& entry : fs::directory_iterator(tmp, ec))
      if (entry.path().filename() != "kg_host_prefix.h" && entry.path().filename() != "kg_host_prefix.h.gch" &&
          entry.path().filename() != includes::kCoveredFile)
        remove_tree(entry.path().string(), ec);
    hp.bytes = text.size();
    // 4. each chain's preprocessed prefix (pp_splice.h); a chain without one preprocesses whole units
    auto run = [&](const std::string& name, const std::string& script, std::string* err) {
      sandbox::Record rr = run_script(name, script);
      if (rr.status == sandbox::Status::OK) return true;
      *err = std::string(sandbox::status_name(rr.status)) + " " + rr.stderr_text.substr(0, 1500);
      return false;
    };
    auto preprocess_of = [](const std::vector<std::string>& chain) {
      std::vector<std::string> pp;
      for (const auto& c : chain)
        if (nvcc::is_preprocess(c)) pp.push_back(c);
      return pp.size() == 1 ? pp[0] : std::string();
    };
    for (const auto& [chain, cmd] :
         {std::pair<std::string, std::string>{"host", preprocess_of(pipe.host)}, {"device", preprocess_of(pipe.device)}}) {
      std::string why = "no single preprocess step";
      if (cmd.empty() || !splice::prepare(chain, cmd, env, unit_text, tmp.string(), run, &why))
        std::fprintf(stderr,
                     "kernelgate: warning: the cuda prefix is not kept preprocessed for the %s chain (%s); it preprocesses whole units\n",
                     chain.c_str(), why.substr(0, 1500).c_str());
    }
    publish_entry(tmp, dir, "cuda host prefix");
  } catch (const std::exception& e) { return give_up(tmp, e.what()); }
  return with_splices();
}

std::string shim_dir() {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  // Checked on every call (cheap: unchanged files are not re-read): it is bound into every cuda build.
  fs::path dir = fs::path(cache_root()) / ("shim-" + shim::digest().substr(0, 16));
  std::error_code ec;
  if (!verified(dir, "torch/extension.h shim", nullptr)) {
    fs::path tmp = dir.string() + ".tmp" + std::to_string(::getpid());
    remove_tree(tmp.string(), ec);
    for (const auto& [name, text] : shim::files()) {
      fs::create_directories((tmp / name).parent_path(), ec);
      write_file((tmp / name).string(), text);
    }
    publish_entry(tmp, dir, "torch/extension.h shim");
  }
  return dir.string();
}

std::string identity(Kind kind, const std::string& arch) {
  std::string id = "kernelgate " KG_VERSION "\nlibtorch " KG_TORCH_VERSION " " KG_TORCH_LIB_DIR "\n";
  id += std::string("torch_cuda ") + (KG_TORCH_CUDA ? "1" : "0") + "\n";
  id += "cxx " + file_identity(KG_CXX_COMPILER) + "\n" + join(cxx_flags(), " ") + "\n";
  if (kind == Kind::Cuda) {
    id += "nvcc " + file_identity(KG_NVCC) + " " KG_CUDA_VERSION "\n" + join(nvcc_flags(arch), " ") + "\n";
    id += "cicc " + file_identity(std::string(KG_CUDA_ROOT) + "/nvvm/bin/cicc") + "\n";
    id += "shim " + shim::digest() + "\n";
  }
  if (kind == Kind::Nvrtc) id += "nvrtc " + file_identity(nvrtc_helper_path()) + " " KG_CUDA_VERSION "\n";
  id += "link " + join(link_flags(kind == Kind::Cuda), " ") + "\n";
  return id;
}

}  // namespace kg::loader::toolchain

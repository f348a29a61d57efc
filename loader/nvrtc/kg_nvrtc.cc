// kg-nvrtc: compiles one nvrtc-kind source to a cubin. It runs inside the sandbox's compile
// profile (NVRTC parses untrusted code, so it gets the same box as g++ and nvcc), reads only
// the source it is given, and writes the cubin plus the lowered names of name expressions.
//
//   kg-nvrtc --arch sm_90 --out kernel.cubin --names names.txt [--display NAME]
//            [--name EXPR]... SOURCE
//
// Exit status: 0 built; 1 the source did not compile (NVRTC's log on stderr, in the EDG
// "file(line): error: message" form); 2 bad usage or an NVRTC failure of its own.
#include <nvrtc.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Program {
  nvrtcProgram p = nullptr;
  Program() = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() { reset(); }
  void reset() {
    if (p) nvrtcDestroyProgram(&p);
    p = nullptr;
  }
};

int die(const std::string& what, nvrtcResult r) {
  std::fprintf(stderr, "kg-nvrtc: %s: %s\n", what.c_str(), nvrtcGetErrorString(r));
  return 2;
}

struct Args {
  std::string arch = "sm_90", out, names_out, source, display;
  std::vector<std::string> names;
};

// Returns -1 to go on, else the exit status.
int parse_args(int argc, char** argv, Args* args) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kg-nvrtc: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--arch") args->arch = next();
    else if (a == "--out") args->out = next();
    else if (a == "--names") args->names_out = next();
    else if (a == "--name") args->names.push_back(next());
    else if (a == "--display") args->display = next();
    else if (!a.empty() && a[0] != '-' && args->source.empty()) args->source = a;
    else {
      std::fprintf(stderr, "kg-nvrtc: unexpected argument %s\n", a.c_str());
      return 2;
    }
  }
  if (args->source.empty() || args->out.empty()) {
    std::fprintf(stderr, "usage: kg-nvrtc --arch sm_90 --out FILE.cubin [--names FILE] [--name EXPR]... SOURCE\n");
    return 2;
  }
  if (args->display.empty()) args->display = args->source;
  return -1;
}

// First with -minimal (NVRTC leaves out texture, surface and device-runtime declarations: a
// tenth of a small kernel's compile time); a source that needs them fails that compile and is
// compiled again without it, and only that second compile's log is shown. Returns -1 when it
// compiled, else the exit status.
int compile(const Args& args, const std::string& text, Program* prog) {
  const std::string arch_opt = "--gpu-architecture=" + args.arch;
  std::vector<const char*> opts = {arch_opt.c_str(), "--std=c++17", "-default-device", "-DKERNELGATE_NVRTC=1"};
#ifdef KG_CUDA_INCLUDE
  opts.push_back("-I" KG_CUDA_INCLUDE);
#endif
  opts.push_back("-minimal");  // last: the second try drops it
  nvrtcResult compiled = NVRTC_SUCCESS;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (attempt == 1) opts.pop_back();
    prog->reset();
    nvrtcResult r = nvrtcCreateProgram(&prog->p, text.c_str(), args.display.c_str(), 0, nullptr, nullptr);
    if (r != NVRTC_SUCCESS) return die("nvrtcCreateProgram", r);
    for (const auto& n : args.names) {
      r = nvrtcAddNameExpression(prog->p, n.c_str());
      if (r != NVRTC_SUCCESS) return die("nvrtcAddNameExpression(" + n + ")", r);
    }
    compiled = nvrtcCompileProgram(prog->p, static_cast<int>(opts.size()), opts.data());
    if (compiled != NVRTC_ERROR_COMPILATION && compiled != NVRTC_ERROR_INVALID_OPTION) break;
  }
  size_t log_size = 0;
  if (nvrtcGetProgramLogSize(prog->p, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    std::string log(log_size, '\0');
    if (nvrtcGetProgramLog(prog->p, &log[0]) == NVRTC_SUCCESS) std::fputs(log.c_str(), stderr);
  }
  if (compiled == NVRTC_ERROR_COMPILATION) return 1;
  if (compiled != NVRTC_SUCCESS) return die("nvrtcCompileProgram", compiled);
  return -1;
}

int write_cubin(const Program& prog, const std::string& out) {
  size_t cubin_size = 0;
  nvrtcResult r = nvrtcGetCUBINSize(prog.p, &cubin_size);
  if (r != NVRTC_SUCCESS) return die("nvrtcGetCUBINSize", r);
  if (cubin_size == 0) {
    std::fprintf(stderr, "kg-nvrtc: NVRTC produced no cubin (is --arch a real sm_XX?)\n");
    return 2;
  }
  std::vector<char> cubin(cubin_size);
  r = nvrtcGetCUBIN(prog.p, cubin.data());
  if (r != NVRTC_SUCCESS) return die("nvrtcGetCUBIN", r);
  std::ofstream o(out, std::ios::binary);
  o.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  if (!o) {
    std::fprintf(stderr, "kg-nvrtc: cannot write %s\n", out.c_str());
    return 2;
  }
  return -1;
}

// The lowered name of each name expression, "EXPR\tLOWERED" a line.
int write_names(const Program& prog, const Args& args) {
  std::ofstream nf(args.names_out);
  for (const auto& n : args.names) {
    const char* lowered = nullptr;
    nvrtcResult r = nvrtcGetLoweredName(prog.p, n.c_str(), &lowered);
    if (r != NVRTC_SUCCESS || !lowered) {
      std::fprintf(stderr, "%s: error: kernel '%s' is not defined in the source (or is not a __global__ function)\n", args.display.c_str(),
                   n.c_str());
      return 1;
    }
    nf << n << "\t" << lowered << "\n";
  }
  return nf ? -1 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (int rc = parse_args(argc, argv, &args); rc >= 0) return rc;
  std::ifstream in(args.source, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "kg-nvrtc: cannot read %s\n", args.source.c_str());
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  Program prog;
  if (int rc = compile(args, ss.str(), &prog); rc >= 0) return rc;
  if (int rc = write_cubin(prog, args.out); rc >= 0) return rc;
  if (!args.names_out.empty())
    if (int rc = write_names(prog, args); rc >= 0) return rc;
  return 0;
}

// `kernelgate warmup [--kind cpu|cuda|nvrtc|all]`: builds the per-toolchain precompiled work into
// the cache ahead of the first build.
#include "kernelgate/loader.h"

#include <cstdio>
#include <string>
#include <vector>

namespace {

const char* kWarmupUsage =
    "usage: kernelgate warmup [--kind cpu|cuda|nvrtc|all]\n"
    "\n"
    "Builds into the cache ($KERNELGATE_CACHE) what every build of a kind reuses and would\n"
    "otherwise build on its first use: the torch/extension.h shim, the precompiled prelude\n"
    "(ATen, for the cpu kind and all registration glue), and for cuda nvcc's dry run and the\n"
    "precompiled host prefixes (the lean <torch/extension.h>, and with a source's own\n"
    "<ATen/ATen.h> or <ATen/cuda/CUDAContext.h>). Each is built in the compile sandbox, once per\n"
    "toolchain; what is already in the cache (and matches its recorded digests) is kept.\n"
    "Prints each piece, whether it was built or already there, and how long it took.\n"
    "--kind all (the default) warms every kind this kernelgate can build. cuda's are for\n"
    "$KERNELGATE_CUDA_ARCH (default sm_90), as builds are.\n"
    "\n"
    "Example: KERNELGATE_CACHE=/scratch/kg-cache kernelgate warmup --kind cuda\n"
    "\n"
    "Exit status: 0 everything is ready, 1 something could not be built (builds still work,\n"
    "slower; the message says what), 2 bad usage, or a kind asked for by name that cannot be\n"
    "built here (no nvcc, no kg-nvrtc).\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "kernelgate warmup: %s\n\n%s", msg.c_str(), kWarmupUsage);
  return 2;
}

}  // namespace

int kg_cmd_warmup(int argc, char** argv) {
  using kg::loader::Kind;
  std::vector<Kind> kinds = {Kind::Cpu, Kind::Cuda, Kind::Nvrtc};
  bool named = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kWarmupUsage, stdout);
      return 0;
    }
    if (a != "--kind") return usage_error("unknown argument " + a);
    if (i + 1 >= argc) return usage_error("--kind needs a value");
    const std::string v = argv[++i];
    Kind k;
    if (v == "all") {
      kinds = {Kind::Cpu, Kind::Cuda, Kind::Nvrtc};
      named = false;
    } else if (kg::loader::parse_kind(v, &k)) {
      kinds = {k};
      named = true;
    } else {
      return usage_error("--kind must be cpu, cuda, nvrtc, python or all, got '" + v + "'");
    }
  }
  int status = 0;
  for (Kind kind : kinds) {
    const std::string name = kg::loader::kind_name(kind);
    if (std::string why = kg::loader::kind_unavailable(kind); !why.empty()) {
      std::printf("%s: skipped: %s\n", name.c_str(), why.c_str());
      if (named) return 2;
      continue;
    }
    std::vector<kg::loader::WarmupStep> steps;
    try {
      steps = kg::loader::warmup(kind);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kernelgate warmup: %s: %s\n", name.c_str(), e.what());
      return 2;
    }
    if (steps.empty()) std::printf("%s: nothing to precompile (each source is compiled alone)\n", name.c_str());
    for (const auto& s : steps) {
      if (!s.error.empty()) {
        std::printf("%s: %s: FAILED after %.1f s: %s\n", name.c_str(), s.what.c_str(), s.seconds, s.error.c_str());
        status = 1;
      } else {
        std::printf("%s: %s: %s in %.1f s (%s)\n", name.c_str(), s.what.c_str(), s.built ? "built" : "already in the cache", s.seconds,
                    s.entry.c_str());
      }
    }
    std::fflush(stdout);
  }
  return status;
}

// The compilers kernelgate drives and how they run: flags, include paths, the precompiled
// prelude, the torch/extension.h shim, and the sandbox spec every build step runs under.
// Private to the loader.
#pragma once

#include "kernelgate/loader.h"
#include "nvcc_pipeline.h"
#include "pp_splice.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kg::loader::toolchain {

// libtorch's include dirs, less the compiler's own system dirs.
std::vector<std::string> torch_include_dirs();
// Host directories a compile child must see besides the profile's system binds; without
// libtorch's for the nvrtc kind (each bind is a few mount calls in every build).
std::vector<std::string> binds(bool torch = true);
// g++ flags for code that includes libtorch headers.
std::vector<std::string> cxx_flags();
// nvcc flags for a cuda-kind unit (load_inline's defaults), for `arch` ("sm_90").
std::vector<std::string> nvcc_flags(const std::string& arch);
// `nvcc --dryrun` for the cuda kind's unit (kg_unit.cu -> kg_unit.o) with nvcc_flags(arch): run
// once in the compile profile, then kept in the cache root per nvcc and flags. The dry run's
// folder reads "$PWD" (the build script runs in the build folder). "" when nvcc fails.
std::string nvcc_dryrun(const std::string& arch, const BuildOptions& options, std::string* rejected = nullptr);
// The folder nvcc_dryrun keeps its text in (cache_root()/nvcc-dryrun-<hash>).
std::string nvcc_dryrun_dir(const std::string& arch);
// Libraries an artifact links against ("-L... -l...").
std::vector<std::string> link_flags(bool cuda);

// "sm_90", "90", "sm_90a", "compute_90" -> "sm_90"/"sm_90a"; throws on anything else.
std::string normalize_arch(const std::string& arch);
// BuildOptions::cuda_arch, else $KERNELGATE_CUDA_ARCH, else sm_90 (H200).
std::string cuda_arch(const BuildOptions& options);

bool have_nvcc();
bool have_nvrtc_helper();
std::string nvrtc_helper_path();  // $KERNELGATE_NVRTC, else beside the running binary, else the build tree

// The sandbox spec of one build step: compile profile, read-only toolchain binds, `rw` writable.
sandbox::Spec compile_spec(const std::vector<std::string>& argv, const std::vector<std::string>& ro, const std::string& rw,
                           const BuildOptions& options);

// The precompiled prelude (ATen + torch/library.h) in the user's cache; "" when it cannot be built
// (builds go on, slower). Never inside a submission's reach: compile children see it read-only.
// Like every entry below it is verified against the digests kernelgate recorded when it built
// it (digest_index.h) before each use: an altered or unrecorded one is removed and rebuilt, and
// `*rejected` says so.
std::string prelude_dir(const BuildOptions& options, std::string* rejected = nullptr);
// The cuda kind's precompiled host prefix: cudafe++'s output for kernelgate's own unit
// (`unit_text`, the lines every cuda unit starts with) up to where a submission's part would
// begin, as kg_host_prefix.h, and that header precompiled with the host compile's own flags. Built
// once per dry run, module id and toolchain in the cache root, from kernelgate's text alone: never
// inside a submission's reach, and compile children see it read-only. A unit whose cudafe++ output
// starts with exactly these bytes compiles only the rest. nullopt when it cannot be built (builds
// go on, slower).
// Beside it, each chain's preprocessed prefix (pp_splice.h), when that one could be built.
struct HostPrefix {
  std::string dir;     // to bind read-only
  std::string header;  // dir + "/kg_host_prefix.h"; its .gch is beside it
  uint64_t bytes = 0;  // the header's size
  std::optional<splice::Prefix> host_pp, device_pp;
};
std::optional<HostPrefix> cuda_host_prefix(const nvcc::Pipeline& pipe, const std::string& unit_text, const std::string& module_id,
                                           const std::string& arch, const BuildOptions& options, std::string* rejected = nullptr);
// A directory holding kernelgate's <torch/extension.h> (no Python headers needed).
std::string shim_dir();

// A digest of what kernelgate recorded for the toolchain entry `dir` ("none" when nothing): part
// of the cache key, so artifacts built against a rebuilt prelude are never served.
std::string recorded_digest(const std::string& dir);

// Everything about the toolchain that changes an artifact: compiler binaries, versions, flags.
std::string identity(Kind kind, const std::string& arch);

}  // namespace kg::loader::toolchain

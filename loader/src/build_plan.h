// What one build runs, per kind: the generated files, the one sandboxed command (for cuda, a
// generated script of parallel steps), the binds it needs and what goes into the cache key.
// build.cc runs a plan; this is how each kind's plan is made.
#pragma once

#include "kernelgate/inline_extension.h"
#include "kernelgate/launch_table.h"
#include "kernelgate/loader.h"

#include <string>
#include <utility>
#include <vector>

namespace kg::loader {

inline constexpr const char* kStepsFile = "steps.txt";  // the cuda build script's "name-start|name-end seconds" marks

struct Plan {
  std::vector<std::pair<std::string, std::string>> generated;  // name -> text, written beside src/
  std::vector<std::string> argv;                               // one sandboxed command
  std::vector<std::string> ro;                                 // extra read-only binds
  std::vector<std::string> logs;                               // step logs to read back (in order)
  std::vector<std::string> outputs;                            // files that make the artifact
  std::string artifact;                                        // the one the runner loads
  std::string key_text;                                        // what else goes into the key
  std::vector<std::string> notes;                              // how it will build (BuildResult::notes)
  std::vector<std::string> rejected;                           // toolchain cache entries found altered and rebuilt
  // A file the script leaves when a step took its fast path -> the note that says so.
  std::vector<std::pair<std::string, std::string>> notes_if_file;
  // cuda: the source's <ATen/ATen.h> or <ATen/cuda/CUDAContext.h> reads the lean shim in this
  // build; when that build fails, plan again with lean_aten = false.
  bool lean_aten = false;
};

// `source` is the kernel source's bytes (what it includes decides which precompiled headers apply).
Plan plan_cpu(const OpFolder& op, const c10::FunctionSchema& schema, const Signature& sig, const std::string& src_name,
              const std::string& source, const BuildOptions& options);
Plan plan_cuda(const OpFolder& op, const c10::FunctionSchema& schema, const Signature& sig, const std::string& src_name,
               const std::string& source, const std::string& arch, const BuildOptions& options, bool lean_aten = true);
// The cpu plan without the source's bytes (its notes then name no include).
inline Plan plan_cpu(const OpFolder& op, const c10::FunctionSchema& schema, const Signature& sig, const std::string& src_name,
                     const BuildOptions& options) {
  return plan_cpu(op, schema, sig, src_name, "", options);
}

// A load_inline extension's generated units (glue.h): the g++ unit (kg_glue.cc, which includes
// src/main.cpp), for CUDA the nvcc unit after the common prefix (it includes src/cuda.cu), the
// artifact's name, and the sources whose includes decide the precompiled headers.
struct InlineUnits {
  std::string glue, cuda_unit_body, artifact, cpp_source, cuda_source;
};
// What kernelgate does with an extension's extra flags (inline_extension.cc): those it applies to
// g++ and to nvcc (then run whole), and those it does not, each named with why in a note.
struct InlineFlags {
  std::vector<std::string> cxx, nvcc, notes;
};
InlineFlags inline_flags(const InlineExtension& ext);
Plan plan_inline_cpu(const InlineUnits& units, const std::vector<std::string>& cxx_extra, const BuildOptions& options);
Plan plan_inline_cuda(const InlineUnits& units, const std::vector<std::string>& cxx_extra, const std::vector<std::string>& nvcc_extra,
                      const std::string& arch, const BuildOptions& options, bool lean_aten = true);

// The lines a cuda unit starts with: glue::cuda_unit_prefix(), then an #include of each of
// `headers` (the source's leading heavy includes). Each distinct prefix has its own precompiled
// host prefix (toolchain::cuda_host_prefix).
std::string cuda_prefix(const std::vector<std::string>& headers);
// The prefixes kernelgate knows ahead of time (kernelgate warmup builds each): none of the heavy
// headers, each alone, and all of them.
std::vector<std::vector<std::string>> cuda_prefix_variants();
// The module id every cuda unit is built with (nvcc_pipeline.h).
std::string cuda_module_id();
Plan plan_nvrtc(const OpFolder& op, const launch::Table& table, const std::string& src_name, const std::string& arch);

// The build script's marks (kStepsFile) as (step, seconds), in the order the steps started, then
// "script": its first mark to its last. A mark without its pair, or a line that is not one, is
// skipped.
std::vector<std::pair<std::string, double>> read_steps(const std::string& path);

}  // namespace kg::loader

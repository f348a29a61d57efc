// nvcc's own compile steps for the cuda kind's unit, rearranged into two chains that run side by side.
//
// nvcc runs its steps one after another: host preprocess, cudafe++ (the host-side front end,
// which also writes the unit's module id), device preprocess, cicc (the device front end, which
// reads that id), ptxas, fatbinary, host compile. cudafe++, cicc and the host compiler each parse
// the whole unit, torch headers included: that is most of a cuda build. With the module id
// written beforehand, the host chain (preprocess, cudafe++) and the device chain (preprocess,
// cicc, ptxas, fatbinary) do not depend on each other; only the host compile needs both.
//
// The steps come from `nvcc --dryrun` (the exact commands nvcc would run, with its flags), so the
// artifact is what nvcc itself would build. Output of another shape (an nvcc that plans other
// steps) is refused, and the build runs nvcc whole. Private to the loader.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kg::loader::nvcc {

struct Pipeline {
  std::vector<std::string> env;     // NAME=value settings nvcc gives its steps (CICC_PATH, PATH, ...), one shell word each
  std::vector<std::string> host;    // preprocess, cudafe++ (shell commands, in order)
  std::vector<std::string> device;  // preprocess, cicc, ptxas..., fatbinary
  std::string host_compile;         // the host compiler on cudafe++'s output (includes the device stub)
  std::string module_id_file;       // the file cudafe++ and cicc read the module id from
  std::string host_source;          // cudafe++'s output, the host compile's input ("kg_unit.cudafe1.cpp")
  std::string stub_file;            // the stub cudafe++'s output ends by including ("kg_unit.cudafe1.stub.c")
};

// Parses the "#$ " lines of `nvcc --dryrun` for one unit. The preprocess commands get
// `preprocess_suffix` appended (the build script's extra defines). On a shape other than the
// one above: nullopt, and *why says what did not match.
std::optional<Pipeline> parse_dryrun(const std::string& text, const std::string& preprocess_suffix, std::string* why);

// The host compile rewritten to precompile `header` into `pch` with the same flags (g++'s
// -x c++-header); "" when the command does not have the words to rewrite.
std::string precompile_command(const Pipeline& p, const std::string& header, const std::string& pch);

// One of the pipeline's preprocess commands (host or device) made to read `input` and write
// `output` instead of the unit and its .ii. `front` goes right after the compiler (ahead of every
// include directory), `back` at the end, and the forced `-include "cuda_runtime.h"` names
// `include` instead, or goes when `include` is "". "" when the command lacks a word to rewrite.
struct PreprocessEdit {
  std::string input, output;
  std::string front, back;
  std::optional<std::string> include;  // unset: kept as it is
};
std::string preprocess_variant(const std::string& cmd, const PreprocessEdit& edit);
// Whether a command is one of the pipeline's preprocess steps (g++ -E).
bool is_preprocess(const std::string& cmd);
// The file a command writes (its -o), quotes removed; "" when it has none.
std::string output_of(const std::string& cmd);

// A module id for the unit: an identifier derived from `seed` (the same seed gives the same id).
std::string module_id(const std::string& seed);

}  // namespace kg::loader::nvcc

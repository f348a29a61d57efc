// The registration glue kernelgate generates around a submission's entry function.
//
// cpu:   one unit, kg_glue.cc = the submission's source + a wrapper with the exact dispatcher
//        signature that calls `<folder>_kernel_impl` + TORCH_LIBRARY_FRAGMENT(kgsub) m.def(schema).
// cuda:  two units. kg_unit.cu (nvcc) = the submission's .cu + `kg_entry_<folder>`, a wrapper
//        with the exact signature calling the user's function; kg_glue.cc (g++, precompiled
//        prelude) declares that wrapper and registers it. The wrapper's call is where a wrong
//        signature fails, in the unit that sees the user's declaration, and the diagnostic is
//        followed by the expected signature.
// Private to the loader.
#pragma once

#include "kernelgate/loader.h"

#include <string>
#include <vector>

namespace kg::loader::glue {

// `source_include` is the path the generated unit #includes the submission's source by.
std::string cpu_unit(const OpFolder& op, const c10::FunctionSchema& schema, const Signature& sig, const std::string& source_include);
std::string cuda_unit(const OpFolder& op, const Signature& sig, const std::string& source_include);
std::string cuda_registration(const OpFolder& op, const c10::FunctionSchema& schema, const Signature& sig);

// The lines every cuda-kind unit starts with, the same in every unit, the way PyTorch's
// load_inline puts its includes ahead of a CUDA source. Everything the host compile reads before
// the submission's part is then the same for every submission and is precompiled once
// (toolchain::cuda_host_prefix).
std::string cuda_unit_prefix();

// load_inline's extensions (inline_extension.h). The g++ unit: src/main.cpp (the cpp sources
// after load_inline's own #include <torch/extension.h>), then each of `functions` registered as
// an op of `ns` through an adapter that widens the parameter and return types the dispatcher
// lacks (float, int, ...) to the ones it has, as pybind11 converts them for load_inline.
std::string inline_glue(const std::string& ns, const std::vector<std::string>& functions);
// The nvcc unit after the common prefix: src/cuda.cu.
std::string inline_cuda_unit_body();

// The cpu unit's wrapper, in an anonymous namespace: its one name that is not the op's own (the
// registration's names are unique per use), so the syntax check (syntax_check.h) can compile many
// units in one translation unit by renaming it per unit.
constexpr const char* kCpuEntry = "kg_entry";

// The marker the wrapper's call carries, so a failing build can name the expected signature.
constexpr const char* kExpectedMarker = "kernelgate: expected signature:";

}  // namespace kg::loader::glue

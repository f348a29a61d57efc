// load_inline's extensions on the supervisor's side (a KernelBench solution's, a python op
// source's): the calls a runner listed, each built in the compile sandbox, and the static rules on
// its library, the way an op's artifact is inspected (harness.h).
#pragma once

#include "kernelgate/harness.h"
#include "kernelgate/inline_extension.h"
#include "kernelgate/loader.h"
#include "kernelgate/policy.h"

#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

namespace kg::harness {

// The library (`kind` cpu or cuda) read as hostile bytes, less what kernelgate's own stub
// extension built the same way has; the findings as violations of `result`. False with
// result.error set when that baseline is unavailable (nothing is charged then).
bool inspect_inline_extension(OpResult& result, const std::string& artifact, loader::Kind kind, const loader::BuildOptions& options,
                              const policy::Policy& policy);

// Why a python load failed when it is kernelgate's limit rather than the source's fault, for
// "kernelgate cannot judge this ... yet: " + it + the load's message: load_inline refused
// (protocol::kCppExtensionRefused: a call kernelgate does not build, or one made inside a call) or
// Triton imported (protocol::kTritonRefused). "" for any other failure.
std::string python_load_limit(const std::string& load_message);

// The arguments of a call that asks a runner for the load_inline calls its source could not
// satisfy (protocol::ModelAction::Extensions, on an op of protocol::kModelSchemaArguments).
std::vector<c10::IValue> extension_requests_call();

// That call's answer read back: throws std::runtime_error saying what is wrong with it (not a
// list, a count that does not match, a field that is not bytes or does not parse).
std::vector<loader::InlineExtension> read_extension_requests(const loader::CallOutcome& outcome);

// Each extension built in the compile sandbox (the build cache's, like an op's artifact) and its
// library inspected: time, cache use and notes recorded in `result`, each BuildResult appended to
// `built`. False with the failure recorded (compile_error with its diagnostics, a forbidden
// library it could not link; the build sandbox's own failure or a missing baseline as
// result.error) when one does not build or cannot be inspected.
bool build_inline_extensions(OpResult& result, const std::vector<loader::InlineExtension>& asked, const loader::BuildOptions& options,
                             const policy::Policy& policy, std::vector<loader::BuildResult>* built);

}  // namespace kg::harness

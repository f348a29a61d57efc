// The static rules on a load_inline extension's library (a KernelBench solution's), the way an op's
// artifact is inspected (harness.h).
#pragma once

#include "kernelgate/harness.h"
#include "kernelgate/loader.h"

#include <string>

namespace kg::harness {

// The library (`kind` cpu or cuda) read as hostile bytes, less what kernelgate's own stub
// extension built the same way has; the findings as violations of `result`. False with
// result.error set when that baseline is unavailable (nothing is charged then).
bool inspect_inline_extension(OpResult& result, const std::string& artifact, loader::Kind kind, const loader::BuildOptions& options,
                              const policy::Policy& policy);

}  // namespace kg::harness

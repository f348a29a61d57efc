// What the toolchain alone puts into an artifact, so the static rules judge only what a
// submission adds to it.
#pragma once

#include "kernelgate/loader.h"
#include "kernelgate/rules.h"

#include <optional>
#include <string>

namespace kg::harness {

// The `kernelgate init` stub of `op`'s overload and kind, written afresh under
// options.work_dir/toolchain-baseline/ (anything there before is removed) and built with
// `options` (cached like any build: a hit is an artifact the cache verified). Headers, the
// registration glue and the runtime bring their own imports and exports (PyTorch 2.x headers
// inline clock reads and environment lookups); the stub has them too. Returns nullopt with the
// reason in `why` when the stub cannot be written, built or read. Results are kept per (kind, op)
// for the life of the process.
std::optional<policy::ArtifactInfo> toolchain_baseline(const loader::OpFolder& op, const loader::BuildOptions& options, std::string* why);

// The same for a load_inline extension of `kind` (cpu: C++ sources only; cuda: a kernel and its
// launch): kernelgate's own stub extension built with `options`, kept per kind.
std::optional<policy::ArtifactInfo> inline_extension_baseline(loader::Kind kind, const loader::BuildOptions& options, std::string* why);

// Removes from `info` the imports and exports that `baseline` has too.
void subtract_baseline(policy::ArtifactInfo& info, const policy::ArtifactInfo& baseline);

}  // namespace kg::harness

// A fast check that many cpu-kind op folders compile: each folder's registration glue exactly as
// build() plans it (plan_cpu: the same compiler, flags, shim and precompiled prelude), compiled
// with -fsyntax-only, many units included into one translation unit, in the sandbox's compile
// profile. What it leaves out is code generation and the link; build() stays what judges a
// submission. Meant for kernelgate's own stubs (a submission's source could clash with another's).
// Private to the loader (the all-stubs test checks every overload's `kernelgate init` stub).
#pragma once

#include "kernelgate/loader.h"

#include <string>
#include <vector>

namespace kg::loader {

struct SyntaxCheck {
  std::string op;   // "relu.default"
  bool ok = false;  // the unit compiled
  std::string log;  // the compiler's output for this unit (or why it could not be checked)
};

// One result per op folder, in order. `per_process` units go to one compiler run; a run that
// fails is checked again unit by unit (each its own translation unit), so that each log is its
// own folder's. The units are written
// under options.work_dir (a fresh folder, removed afterwards).
std::vector<SyntaxCheck> check_syntax(const std::vector<OpFolder>& ops, const BuildOptions& options, size_t per_process);

}  // namespace kg::loader

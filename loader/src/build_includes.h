// What a source includes, against what kernelgate precompiled: the cpu kind's prelude and the
// cuda kind's prefix each record the headers they cover (covered.txt, as an #include spells
// them), and a build says whether the source's own includes are all among them (the fast path:
// the compiler reads only the source) or which are not (compiled with every build). The cuda kind
// also moves the source's leading includes of a few heavy headers (ATen/ATen.h,
// ATen/cuda/CUDAContext.h) into its precompiled prefix. Private to the loader.
#pragma once

#include <string>
#include <vector>

namespace kg::loader::includes {

// The covered file's name in a prelude or prefix directory.
inline constexpr const char* kCoveredFile = "covered.txt";

// Every `#include <name>` of a source (angle brackets: the toolchain's headers), in order, each once.
std::vector<std::string> angle_includes(const std::string& source);

// The headers of `hoistable` that the source includes in its leading block, in the source's
// order: the lines before the first that is not blank, a comment, `#pragma once` or an
// `#include <...>` of a standard, CUDA runtime, torch, ATen or c10 header. Moving them ahead of
// the source (behind the unit's own prefix) changes nothing: only such headers, which define
// nothing the others read, come before them.
std::vector<std::string> leading_includes(const std::string& source, const std::vector<std::string>& hoistable);

// The #include names of header paths: /usr/include/ATen/ATen.h -> ATen/ATen.h,
// .../include/c++/12/vector -> vector, <dir>/torch/extension.h -> torch/extension.h for each of
// `roots` (directories whose files are named relative to them). Sorted, each once.
std::vector<std::string> include_names(const std::vector<std::string>& paths, const std::vector<std::string>& roots);

// The note a build gets: "precompiled headers: ..." when every name in `wanted` is in `covered`
// (sorted), else which are not.
std::string coverage_note(const std::vector<std::string>& wanted, const std::vector<std::string>& covered, const std::string& what);

// The names in `dir`/covered.txt (sorted, one per line); empty when there is none.
std::vector<std::string> read_covered(const std::string& dir);

}  // namespace kg::loader::includes

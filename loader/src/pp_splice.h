// The cuda kind's preprocessed prefix: each chain's preprocess reads only the submission's part.
//
// Every cuda unit starts with the same lines (glue::cuda_unit_prefix), and most of each chain's
// `g++ -E` (0.4 s here, more on the H200) goes to the headers those lines include. Their output
// is the same bytes for every unit, so it is kept per chain (host and device preprocess differ)
// beside the precompiled host prefix, and a build preprocesses only the rest of its unit, in the
// preprocessor state the prefix leaves behind:
//  - its macros: `g++ -dM` after the prefix, less the compiler's own, with __COUNTER__ advanced
//    as far as the prefix took it and __BASE_FILE__ naming the unit;
//  - its #pragma once headers, which a second #include must not read again: empty stand-ins
//    under the same names in a directory searched before any other (headers with include guards
//    are skipped through their guard macros already).
// The kept output and the rest's are then joined. When the rest still enters one of the prefix's
// #pragma once headers (by a name the stand-ins do not shadow: an absolute path, or one relative
// to the including file), the join is refused and that chain preprocesses its whole unit. Before
// any build uses a prefix, a test unit is preprocessed both ways and must give the same tokens.
// Private to the loader.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kg::loader::splice {

// One chain's kept prefix, as files in the cuda prefix directory.
struct Prefix {
  std::string text;     // the prefix's preprocessed output
  std::string macros;   // the macro state at its end, for -include
  std::string overlay;  // the stand-ins' directory
  std::string once;     // the #pragma once headers' canonical paths, one per line
};

// The macros file: what `after` (-dM after the prefix) defines that `builtin` (-dM of an empty
// unit) does not, or defines otherwise; builtin macros the prefix removed; `counter` uses of
// __COUNTER__; __BASE_FILE__ as `base_file`.
std::string macro_state(const std::string& after, const std::string& builtin, int counter, const std::string& base_file);
// The files a preprocessed text enters (line markers with flag 1), in order, each once.
std::vector<std::string> entered_files(const std::string& text);
// The include directories `g++ -E -v` lists, in search order.
std::vector<std::string> search_dirs(const std::string& verbose);
bool has_pragma_once(const std::string& header_text);
// A preprocessed text's tokens: line markers and white space removed (for comparing two).
std::string tokens(const std::string& text);
// The unit after its first `prefix_lines` lines, starting with a #line that keeps its numbering
// and file name; "" when the unit has fewer lines.
std::string rest_unit(const std::string& unit, size_t prefix_lines, const std::string& unit_name);
// `kg_splice REST PREFIX ONCE OUT`: the build script's join of the prefix's output with the
// rest's, refused (status 1) when the rest enters a header on the ONCE list or lacks the #line.
std::string shell_function(size_t prefix_lines, const std::string& unit_name);

// Builds one chain's prefix in `dir` (the cuda prefix directory being made, also the sandbox's
// writable folder) from its preprocess command. `run` runs a script there in the compile
// sandbox (false, with the output in *err, when it fails). nullopt, with *why, when any step or
// the self-check fails.
using RunScript = std::function<bool(const std::string& name, const std::string& text, std::string* err)>;
std::optional<Prefix> prepare(const std::string& chain, const std::string& pp_command, const std::string& env, const std::string& prefix,
                              const std::string& dir, const RunScript& run, std::string* why);

// A chain's prefix in `dir` when prepare() left all of its files there.
std::optional<Prefix> find(const std::string& dir, const std::string& chain);

// The preprocess command that reads the rest of the unit (kg_unit_rest.cu) in the prefix's state.
std::string rest_command(const std::string& pp_command, const Prefix& prefix, const std::string& output);

}  // namespace kg::loader::splice

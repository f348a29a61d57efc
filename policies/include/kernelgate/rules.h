// kernelgate policies: static inspection of a built artifact (the submission's .so).
//
// When it runs: in the supervisor, after the build child produced the artifact and before (or
// while) the runner loads it. The supervisor never loads the artifact; it reads the file as
// hostile bytes (read_artifact), then the rules (inspect_artifact) look at what the artifact
// imports, exports and links, and at how its segments are mapped.
//
// What it can and cannot see: names the dynamic loader will resolve (imports), names the
// artifact offers to others (exports), the libraries it asks for (DT_NEEDED) and text
// relocations / writable-and-executable segments. It cannot see what code does with pointers it
// found at run time (a GOT walk, a hand-parsed link map, inline-asm syscalls): those are left to
// the runner-side observers and the trial rules. docs/rules.md lists each rule, its evidence and
// its known weaknesses.
#pragma once

#include "kernelgate/catalogue.h"
#include "kernelgate/policy.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kg::policy {

// One rule that fired (rule_id(rule) is its id: "fallback_to_torch"); `evidence` is one line an
// auditor can check with `nm -D --defined-only`/`readelf -d` on the file.
struct Finding {
  Rule rule;
  std::string evidence;
};

// What the dynamic loader would see in an ELF64 shared object. Names are raw (mangled) symbol
// names, each listed once, in symbol-table order.
struct ArtifactInfo {
  std::string path;                       // the file read ("<bytes>" for read_artifact_bytes)
  std::vector<std::string> imports;       // undefined dynamic symbols: resolved from other objects
  std::vector<std::string> weak_imports;  // the subset of `imports` bound weak (may stay null)
  std::vector<std::string> exports;       // defined global/weak dynamic symbols of default/protected visibility
  std::vector<std::string> needed;        // DT_NEEDED library names, e.g. "libtorch_cpu.so"
  std::string soname;                     // DT_SONAME, empty when absent
  bool textrel = false;                   // DT_TEXTREL or DF_TEXTREL: the loader must write into code
  bool wx_segment = false;                // a PT_LOAD segment mapped both writable and executable
  bool exec_stack = false;                // PT_GNU_STACK asks for an executable stack
  uint64_t init_array_size = 0;           // DT_INIT_ARRAYSZ / 8: static constructors run at load
  bool has_init = false;                  // DT_INIT present
  // Printable strings (>= 6 chars) found in the file that name a vendor library or one of its
  // entry points ("libopenblas.so.0", "cblas_sgemm"): the argument of a dlopen/dlsym.
  std::vector<std::string> library_strings;
  // Instructions in the executable segments that read the time-stamp or performance counters
  // ("rdtsc at 0x1139 (relu__default_kernel_impl+0x9)"; x86-64 rdtsc/rdtscp/rdpmc, aarch64 mrs of
  // cntvct_el0/cntpct_el0), found by decoding the code as the CPU would (policies/src/x86_decode.h).
  std::vector<std::string> counter_reads;
};

// Reads the file at `so_path` (at most 1 GiB). Throws std::runtime_error naming the file and the
// problem (not ELF64 little-endian x86-64/aarch64, truncated, a table outside the file, ...).
// Never reads outside the file's bytes, whatever the headers claim.
ArtifactInfo read_artifact(const std::string& so_path);
// The same on bytes in memory (fuzzing, tests). `name` is used in error messages and as `path`.
ArtifactInfo read_artifact_bytes(const uint8_t* data, size_t size, const std::string& name = "<bytes>");

// Runs every static rule on `info` for the op overload `op` ("relu.default"; the dispatcher's
// "aten::relu" also works). Rules whose action in `policy` is Off are skipped; the caller
// decides what Reject/Flag mean (same as for the trial rules). At most one Finding per rule,
// its evidence naming every offending symbol (capped). An honest kernel built by kernelgate's
// g++ against libtorch yields none (tests/legit/ is the proof).
std::vector<Finding> inspect_artifact(const ArtifactInfo& info, const Policy& policy, const std::string& op);

// Individual rules (one file each, policies/src/rule_<name>.cc); inspect_artifact calls them in
// this order. Exposed for the unit tests. Each returns an empty evidence string when clean.
std::string rule_fallback_to_torch(const ArtifactInfo& info, const std::string& op);
std::string rule_forbidden_library(const ArtifactInfo& info, const Policy& policy);
// forbidden_library for a build that did not link: `unresolved` are the symbols its linker found
// undefined (loader::undefined_references of the build log). Calling a vendor library's API is
// the evidence, whether or not kernelgate's link line could satisfy it. "" when none is forbidden.
std::string rule_forbidden_library_unlinked(const std::vector<std::string>& unresolved, const Policy& policy);
std::string rule_timer_tampering(const ArtifactInfo& info);
std::string rule_cache_tampering(const ArtifactInfo& info);
std::string rule_shape_specialisation(const ArtifactInfo& info);

// fallback_to_torch, dynamic half: whether an operator that kg-runner saw the kernel dispatch
// during its call ("aten::empty") is one an honest kernel may call while judged as `op`
// ("relu.default"). The same allowed list as the static half: allocation, fills, views,
// copies, metadata; never the judged op itself. Operators outside aten are not judged here.
bool dispatched_operator_allowed(const std::string& name, const std::string& op);

// abi::__cxa_demangle, or the name itself when it is not a mangled C++ name.
std::string demangle(const std::string& mangled);

}  // namespace kg::policy

// libFuzzer target for the static artifact reader (policies/src/elf_symbols.cc) and the rules
// that run on what it returns (demangling hostile names included): the artifact is written by
// the submission's toolchain run and read in the trusted supervisor, so no byte sequence may
// crash it, hang it or make it read outside the buffer. A std::runtime_error is the only
// acceptable failure. Built by tests/fuzz/CMakeLists.txt (seeds: BUILD/seeds_elf).
#include "kernelgate/catalogue.h"
#include "kernelgate/rules.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kg::policy::Policy policy = [] {
    kg::policy::Policy p;
    p.allowed_libraries = {"cub", "cutlass", "thrust"};
    return p;
  }();
  // Every finding names one of the catalogue's rules.
  auto catalogued = [](kg::policy::Rule r) { return static_cast<std::size_t>(r) < kg::policy::rule_catalogue().size(); };
  try {
    const kg::policy::ArtifactInfo info = kg::policy::read_artifact_bytes(data, size, "fuzz.so");
    for (const auto& f : kg::policy::inspect_artifact(info, policy, "relu.default"))
      if (!catalogued(f.rule) || f.evidence.empty()) __builtin_trap();
    for (const auto& f : kg::policy::inspect_artifact(info, policy, "clone.default"))
      if (!catalogued(f.rule)) __builtin_trap();
  } catch (const std::runtime_error&) {}
  return 0;
}

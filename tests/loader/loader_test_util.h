// Helpers for the loader tests: throwaway submissions and builds against the tests' cache.
#pragma once

#include "kernelgate/loader.h"

#include <map>
#include <string>

namespace kg::loader::test {

// A fresh directory under $TMPDIR, removed by the destructor.
struct TempDir {
  TempDir();
  ~TempDir();
  std::string path;
};

// Writes DIR/<folder>/<name> = text for each file, returns the scanned op folder of `op`.
OpFolder make_op(const std::string& dir, const std::string& op, const std::map<std::string, std::string>& files);
BuildOptions options(const std::string& submission_root);
// A relu.default op folder whose implementation is `source`, built with options() in its own
// directory (the runner tests' shared kernels).
struct BuiltRelu {
  explicit BuiltRelu(const std::string& source);
  TempDir dir;
  BuildResult built;
  OpFolder op;
};
// Whether a GPU could run launches here (never on the CPU machines): a device node exists and
// the runner was built with CUDA.
bool gpu_available();
std::string example_dir(const std::string& rel);  // KG_TEST_SOURCE_DIR/examples/rel
std::string read(const std::string& path);
std::string all_diagnostics(const BuildResult& r);
// The names an artifact defines for the dynamic linker (sorted, as nm prints them).
std::string defined_symbols(const std::string& so);
// A comment that makes a source's cache key new, for tests that need a cold build.
std::string unique_tag();

}  // namespace kg::loader::test

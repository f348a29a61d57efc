// BuildPrecompiled*, BuildIncludes*: a source's standard headers come from kernelgate's
// precompiled work (the cpu kind's prelude, the cuda kind's prefix with the source's own heavy
// includes), a header outside it is compiled with the unit and still works, the precompiled
// entries are verified like every cache entry, and warmup() builds them ahead of time.
#include "build_includes.h"
#include "build_plan.h"
#include "kg_build_config.h"
#include "loader_test_util.h"
#include "nvcc_pipeline.h"
#include "toolchain.h"
#include "util.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace kg::loader;
using namespace kg::loader::test;

namespace {

std::string note_starting(const BuildResult& r, const std::string& start) {
  for (const auto& n : r.notes)
    if (n.rfind(start, 0) == 0) return n;
  return "";
}

std::string join_notes(const BuildResult& r) { return "notes: " + join(r.notes, "; "); }

// $KERNELGATE_CACHE (the toolchain entries' root) set for one test.
struct ScopedCacheRoot {
  explicit ScopedCacheRoot(const std::string& root) {
    const char* old = std::getenv("KERNELGATE_CACHE");
    had = old != nullptr;
    if (had) saved = old;
    ::setenv("KERNELGATE_CACHE", root.c_str(), 1);
  }
  ~ScopedCacheRoot() {
    if (had) ::setenv("KERNELGATE_CACHE", saved.c_str(), 1);
    else ::unsetenv("KERNELGATE_CACHE");
  }
  std::string saved;
  bool had = false;
};

// Runs a built relu.default on the CPU and checks its answer against clamp_min(0).
void expect_relu_runs(const BuiltRelu& r) {
  RunnerOptions o;
  o.runner_path = default_runner_path();
  o.ro_binds = {fs::path(r.built.artifact).parent_path().string()};
  o.limits.cpu_s = 20;
  o.limits.wall_s = 30;
  o.limits.memory_mb = 1024;
  auto runner = RunnerClient::start(o);
  const std::optional<LoadError> refused = runner->load(load_request(r.op, r.built, Device::Cpu));
  ASSERT_FALSE(refused.has_value()) << refused->message;
  const at::Tensor x = at::randn({257});
  CallOutcome out = runner->call({x}, 1, 10);
  ASSERT_EQ(out.kind, CallOutcome::Kind::Ok) << out.message;
  ASSERT_EQ(out.returns.size(), 1u);
  EXPECT_TRUE(out.returns[0].toTensor().equal(x.clamp_min(0)));
  runner->finish();
}

std::string cuda_relu(const std::string& head) {
  return unique_tag() + head + read(example_dir("cuda/correct/relu__default/relu__default_implementation.cu"));
}

}  // namespace

TEST(BuildIncludes, LeadingIncludesStopAtTheFirstOtherLine) {
  const std::vector<std::string> heavy = {"ATen/ATen.h", "ATen/cuda/CUDAContext.h"};
  EXPECT_EQ(includes::leading_includes("// c\n/* a\n b */\n#pragma once\n#include <vector>\n#include <ATen/ATen.h>  // all\n", heavy),
            std::vector<std::string>{"ATen/ATen.h"});
  EXPECT_EQ(includes::leading_includes("#include <ATen/cuda/CUDAContext.h>\n#include <ATen/ATen.h>\n", heavy),
            (std::vector<std::string>{"ATen/cuda/CUDAContext.h", "ATen/ATen.h"}))
      << "the source's order";
  // A macro, a local header or a library that is not the standard one, CUDA's or torch's may
  // change what the heavy header means: it stays where it is.
  EXPECT_TRUE(includes::leading_includes("#define AT_X 1\n#include <ATen/ATen.h>\n", heavy).empty());
  EXPECT_TRUE(includes::leading_includes("#include \"helper.h\"\n#include <ATen/ATen.h>\n", heavy).empty());
  EXPECT_TRUE(includes::leading_includes("#include <cub/cub.cuh>\n#include <ATen/ATen.h>\n", heavy).empty());
  EXPECT_TRUE(includes::leading_includes("int x;\n#include <ATen/ATen.h>\n", heavy).empty());
  EXPECT_TRUE(includes::leading_includes("#include <ATen/ATen.h> extra\n", heavy).empty());
  EXPECT_EQ(includes::angle_includes("#include <a.h>\n  #  include <b/c.h>\n#include \"d.h\"\n#include <a.h>\n"),
            (std::vector<std::string>{"a.h", "b/c.h"}));
}

TEST(BuildIncludes, HeaderPathsBecomeIncludeNames) {
  EXPECT_EQ(includes::include_names({"/usr/include/ATen/ATen.h", "/usr/include/c++/12/vector",
                                     "/usr/include/x86_64-linux-gnu/c++/12/bits/c++config.h", "/cache/shim-1/torch/extension.h"},
                                    {"/cache/shim-1"}),
            (std::vector<std::string>{"ATen/ATen.h", "bits/c++config.h", "c++/12/vector", "torch/extension.h", "vector",
                                      "x86_64-linux-gnu/c++/12/bits/c++config.h"}));
  EXPECT_EQ(includes::include_names({"/usr/include/torch/csrc/api/include/torch/types.h"}, {}),
            (std::vector<std::string>{"torch/csrc/api/include/torch/types.h", "torch/types.h"}));
  const std::vector<std::string> covered = {"ATen/ATen.h", "vector"};
  EXPECT_EQ(includes::coverage_note({"vector", "ATen/ATen.h"}, covered, "precompiled prelude"),
            "precompiled headers: the precompiled prelude covers every header the source includes (<vector> <ATen/ATen.h>)");
  EXPECT_EQ(includes::coverage_note({"vector", "regex"}, covered, "precompiled prelude"),
            "outside the precompiled headers: <regex> (compiled with every build; the precompiled prelude covers the rest)");
}

TEST(BuildPrecompiled, CpuTorchExtensionTakesThePreludeAndRuns) {
  BuiltRelu r(unique_tag() +
              "#include <torch/extension.h>\n"
              "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) { return self.clamp_min(0); }\n");
  ASSERT_TRUE(r.built.ok) << all_diagnostics(r.built);
  EXPECT_NE(note_starting(r.built, "precompiled headers: the precompiled prelude covers every header"), "") << join_notes(r.built);
  expect_relu_runs(r);
}

TEST(BuildPrecompiled, CpuHeaderOutsideThePreludeIsCompiledAndRuns) {
  BuiltRelu r(
      unique_tag() +
      "#include <ATen/ATen.h>\n#include <ATen/Parallel.h>\n"
      "at::Tensor relu__default_kernel_impl(const at::Tensor& self) {\n"
      "  at::Tensor x = self.contiguous(), out = at::empty_like(x);\n"
      "  const float* in = x.data_ptr<float>();\n  float* o = out.data_ptr<float>();\n"
      "  at::parallel_for(0, x.numel(), 64, [&](int64_t b, int64_t e) { for (int64_t i = b; i < e; ++i) o[i] = in[i] > 0 ? in[i] : 0; });\n"
      "  return out;\n}\n");
  ASSERT_TRUE(r.built.ok) << all_diagnostics(r.built);
  EXPECT_NE(note_starting(r.built, "outside the precompiled headers: <ATen/Parallel.h>"), "") << join_notes(r.built);
  expect_relu_runs(r);
}

TEST(BuildPrecompiled, CudaTorchExtensionTakesThePrecompiledPrefix) {
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  BuildResult r = build(make_op(d.path, "relu.default", {{"relu__default_implementation.cu", cuda_relu("")}}), options(d.path));
  ASSERT_TRUE(r.ok) << all_diagnostics(r);
  EXPECT_NE(note_starting(r, "precompiled headers: the precompiled prefix covers every header"), "") << join_notes(r);
  EXPECT_NE(note_starting(r, "host prefix precompiled"), "") << join_notes(r);
}

TEST(BuildPrecompiled, CudaAtenIncludeReadsTheLeanShimFirst) {
  // Real submissions include <ATen/ATen.h> ahead of <torch/extension.h> and use no more of it
  // than the lean shim holds: the first build reads the shim for it, over the plain prefix,
  // built once, and takes the fast path of a source that includes only <torch/extension.h>.
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  BuildResult r =
      build(make_op(d.path, "relu.default", {{"relu__default_implementation.cu", cuda_relu("#include <ATen/ATen.h>\n")}}), options(d.path));
  ASSERT_TRUE(r.ok) << all_diagnostics(r);
  EXPECT_NE(note_starting(r, "lean ATen includes: the source's own ATen/ATen.h"), "") << join_notes(r);
  EXPECT_EQ(note_starting(r, "the source's own ATen includes"), "") << "built once: " << join_notes(r);
  EXPECT_NE(note_starting(r, "precompiled headers: the precompiled prefix covers every header"), "") << join_notes(r);
  EXPECT_NE(note_starting(r, "prefix preprocessed once: the host chain"), "") << join_notes(r);
  EXPECT_NE(note_starting(r, "prefix preprocessed once: the device chain"), "") << join_notes(r);
  EXPECT_NE(note_starting(r, "host prefix precompiled"), "") << join_notes(r);
  // The same source with the include compiled in its place, all of ATen: the same artifact's symbols.
  TempDir d2;
  BuildOptions as_before = options(d2.path);
  as_before.precompiled_includes = false;
  BuildResult before =
      build(make_op(d2.path, "relu.default", {{"relu__default_implementation.cu", cuda_relu("#include <ATen/ATen.h>\n")}}), as_before);
  ASSERT_TRUE(before.ok) << all_diagnostics(before);
  EXPECT_NE(note_starting(before, "outside the precompiled headers: <ATen/ATen.h>"), "") << join_notes(before);
  EXPECT_EQ(note_starting(before, "lean ATen includes"), "") << join_notes(before);
  EXPECT_NE(before.cache_key, r.cache_key);
  EXPECT_EQ(defined_symbols(before.artifact), defined_symbols(r.artifact));
  EXPECT_NE(defined_symbols(r.artifact).find("kg_entry"), std::string::npos);
}

namespace {
// A kernel that needs a free function of ATen the lean shim does not declare (at::sigmoid).
std::string cuda_sigmoid_relu(const std::string& head) {
  return unique_tag() + head +
         "at::Tensor relu__default_kernel_impl(const at::Tensor& self) {\n"
         "  at::Tensor s = at::sigmoid(self);\n"
         "  return self.clamp_min(0) + s * 0;\n"
         "}\n";
}
}  // namespace

TEST(BuildPrecompiled, CudaAtenIncludeNeedingMoreJoinsThePrecompiledPrefix) {
  // A unit that lacks a name with the lean shim is built again with the real header, which
  // leads the source and so joins the prefix, preprocessed and precompiled once.
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  const std::string source = cuda_sigmoid_relu("#include <ATen/ATen.h>\n");
  BuildResult r = build(make_op(d.path, "relu.default", {{"relu__default_implementation.cu", source}}), options(d.path));
  ASSERT_TRUE(r.ok) << all_diagnostics(r);
  EXPECT_NE(note_starting(r, "the source's own ATen includes: the build that read the lean <torch/extension.h> for them failed"), "")
      << join_notes(r);
  EXPECT_EQ(note_starting(r, "lean ATen includes"), "") << "the second build's notes: " << join_notes(r);
  EXPECT_EQ(note_starting(r, "all of ATen"), "") << join_notes(r);
  EXPECT_NE(note_starting(r, "precompiled headers: the precompiled prefix with the source's ATen/ATen.h covers every header"), "")
      << join_notes(r);
  EXPECT_NE(note_starting(r, "prefix preprocessed once: the host chain"), "") << join_notes(r);
  EXPECT_NE(note_starting(r, "host prefix precompiled"), "") << join_notes(r);
  EXPECT_NE(defined_symbols(r.artifact).find("kg_entry"), std::string::npos);
  // Cached under the first build's key: the same source is found at once.
  TempDir d2;
  BuildResult again = build(make_op(d2.path, "relu.default", {{"relu__default_implementation.cu", source}}), options(d2.path));
  EXPECT_TRUE(again.cache_hit) << join_notes(again);
}

TEST(BuildPrecompiled, CudaAtenIncludeUsingATypeTheLeanShimLeavesIncompleteBuilds) {
  // The lean shim declares c10::IValue without defining it: a unit that uses one fails on an
  // incomplete type, not on a missing name. Whatever the lean build's error, the unit is built
  // again with the real header, so the lean path never fails a source the real header builds.
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  const std::string source = unique_tag() +
                             "#include <ATen/ATen.h>\n"
                             "at::Tensor relu__default_kernel_impl(const at::Tensor& self) {\n"
                             "  c10::IValue zero(0.0);\n"
                             "  return self.clamp_min(zero.toDouble());\n"
                             "}\n";
  BuildResult r = build(make_op(d.path, "relu.default", {{"relu__default_implementation.cu", source}}), options(d.path));
  ASSERT_TRUE(r.ok) << all_diagnostics(r) << join_notes(r);
  EXPECT_NE(note_starting(r, "the source's own ATen includes"), "") << join_notes(r);
  // With <torch/extension.h> alone (the lean shim itself), the incomplete type asks for all of ATen.
  TempDir d2;
  std::string lean_only = source;
  lean_only.replace(lean_only.find("#include <ATen/ATen.h>"), std::string("#include <ATen/ATen.h>").size(), "#include <torch/extension.h>");
  BuildResult r2 = build(make_op(d2.path, "relu.default", {{"relu__default_implementation.cu", lean_only}}), options(d2.path));
  ASSERT_TRUE(r2.ok) << all_diagnostics(r2) << join_notes(r2);
  EXPECT_NE(note_starting(r2, "all of ATen"), "") << join_notes(r2);
}

TEST(BuildPrecompiled, CudaAtenIncludeAfterAMacroIsCompiledWithTheUnit) {
  // A macro ahead of the include may change what ATen means: on the build with the real header
  // the include stays in the source's place, outside the precompiled prefix, and the build works.
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  BuildResult r =
      build(make_op(d.path, "relu.default",
                    {{"relu__default_implementation.cu", cuda_sigmoid_relu("#define KG_TEST_MACRO 1\n#include <ATen/ATen.h>\n")}}),
            options(d.path));
  ASSERT_TRUE(r.ok) << all_diagnostics(r);
  EXPECT_NE(note_starting(r, "the source's own ATen includes"), "") << join_notes(r);
  EXPECT_NE(note_starting(r, "outside the precompiled headers: <ATen/ATen.h>"), "") << join_notes(r);
}

TEST(BuildPrecompiled, WarmupBuildsThePreludeOnceAndAPlantedCoveredListIsRebuilt) {
  TempDir root;
  ScopedCacheRoot env(root.path + "/cache");
  EXPECT_TRUE(warmup(Kind::Nvrtc).empty()) << "kg-nvrtc precompiles nothing";
  std::vector<WarmupStep> first = warmup(Kind::Cpu);
  ASSERT_EQ(first.size(), 2u);
  for (const auto& s : first) {
    EXPECT_EQ(s.error, "") << s.what;
    EXPECT_TRUE(s.built) << s.what;
    EXPECT_TRUE(fs::is_directory(s.entry)) << s.entry;
  }
  const std::string prelude = first[1].entry;
  const std::vector<std::string> covered = includes::read_covered(prelude);
  EXPECT_TRUE(std::binary_search(covered.begin(), covered.end(), "ATen/ATen.h"));
  EXPECT_FALSE(std::binary_search(covered.begin(), covered.end(), "kg/planted.h"));
  std::vector<WarmupStep> again = warmup(Kind::Cpu);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_FALSE(again[1].built) << "already in the cache";
  // The attack: a covered list that claims a header the prelude does not hold.
  std::ofstream(prelude + "/" + includes::kCoveredFile, std::ios::app) << "kg/planted.h\n";
  std::string rejected;
  EXPECT_EQ(toolchain::prelude_dir(BuildOptions{}, &rejected), prelude);
  EXPECT_NE(rejected.find("covered.txt does not match its recorded digest"), std::string::npos) << rejected;
  EXPECT_EQ(includes::read_covered(prelude), covered) << "rebuilt as kernelgate recorded it";
}

// The cuda warm-up's pieces are independent compiles of tens of seconds: they are built side by
// side (each prefix under a lock of its own), reported in the fixed order, and a second warm-up
// finds them all.
TEST(BuildPrecompiled, CudaWarmupBuildsItsPiecesSideBySide) {
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir root;
  ScopedCacheRoot env(root.path + "/cache");
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<WarmupStep> steps = warmup(Kind::Cuda);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(steps.size(), 3 + cuda_prefix_variants().size());
  EXPECT_EQ(steps[0].what, "torch/extension.h shim");
  EXPECT_EQ(steps[1].what, "precompiled prelude");
  EXPECT_EQ(steps[2].what, "nvcc dry run");
  EXPECT_EQ(steps[3].what, "cuda host prefix (<torch/extension.h>, <cuda_runtime.h>)");
  EXPECT_EQ(steps[4].what, "cuda host prefix with <ATen/ATen.h>");
  double pieces = 0;
  for (const auto& s : steps) {
    EXPECT_EQ(s.error, "") << s.what;
    EXPECT_TRUE(s.built) << s.what;
    EXPECT_TRUE(fs::is_directory(s.entry)) << s.entry;
    pieces += s.seconds;
  }
  // One after another, the pieces' times add up to the wall time; side by side they add up to more.
  EXPECT_GT(pieces, 1.2 * wall) << "pieces " << pieces << " s, wall " << wall << " s";
  for (const auto& s : warmup(Kind::Cuda)) EXPECT_FALSE(s.built) << s.what << ": already in the cache";
}

TEST(BuildPrecompiled, PlantedCudaPrefixWithAtenIsRebuilt) {
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir root;
  ScopedCacheRoot env(root.path + "/cache");
  const BuildOptions o;
  const std::string arch = toolchain::cuda_arch(o);
  std::string why;
  const auto pipe = nvcc::parse_dryrun(toolchain::nvcc_dryrun(arch, o), "$ATEN", &why);
  if (!pipe) GTEST_SKIP() << "nvcc's dry run has another shape: " << why;
  const std::string prefix = cuda_prefix({"ATen/ATen.h"});
  std::string rejected;
  auto hp = toolchain::cuda_host_prefix(*pipe, prefix, cuda_module_id(), arch, o, &rejected);
  ASSERT_TRUE(hp.has_value());
  EXPECT_EQ(rejected, "");
  const std::vector<std::string> covered = includes::read_covered(hp->dir);
  EXPECT_TRUE(std::binary_search(covered.begin(), covered.end(), "ATen/ATen.h"));
  EXPECT_TRUE(std::binary_search(covered.begin(), covered.end(), "torch/extension.h")) << "the shim's, by its name";
  const std::string genuine = read(hp->header);
  // The attack: host code planted into the header every build with <ATen/ATen.h> reads.
  std::ofstream(hp->header, std::ios::app) << "__attribute__((constructor)) static void planted() {}\n";
  auto again = toolchain::cuda_host_prefix(*pipe, prefix, cuda_module_id(), arch, o, &rejected);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->dir, hp->dir);
  EXPECT_NE(rejected.find("kg_host_prefix.h does not match its recorded digest"), std::string::npos) << rejected;
  EXPECT_EQ(read(hp->header), genuine);
}

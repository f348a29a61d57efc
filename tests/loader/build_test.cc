// Build*: the three kinds build in the sandbox; the cache hits, survives races and corruption;
// diagnostics are structured and relative to the submission.
#include "cache.h"
#include "pp_splice.h"
#include "toolchain.h"
#include "kg_build_config.h"
#include "util.h"
#include "loader_test_util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

namespace fs = std::filesystem;
using namespace kg::loader;
using namespace kg::loader::test;

namespace {

bool torch_has_cuda() { return KG_TORCH_CUDA; }

bool has_note(const BuildResult& r, const std::string& start) {
  for (const auto& n : r.notes)
    if (n.rfind(start, 0) == 0) return true;
  return false;
}

std::string join_notes(const BuildResult& r) { return "notes: " + join(r.notes, "; "); }

const char* kReluCpu = R"(#include <ATen/ATen.h>
at::Tensor relu__default_kernel_impl(const at::Tensor& self) { return self.clamp_min(0); }
)";

}  // namespace

TEST(BuildCpu, BuildsAndCachesAndHitsWithoutTheCompiler) {
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default", {{"relu__default_implementation.cpp", unique_tag() + kReluCpu}});
  BuildResult a = build(op, options(d.path));
  ASSERT_TRUE(a.ok) << all_diagnostics(a);
  EXPECT_FALSE(a.cache_hit);
  EXPECT_EQ(a.cache_key.size(), 64u);
  EXPECT_TRUE(fs::exists(a.artifact));
  EXPECT_NE(a.artifact.find(KG_TEST_CACHE_DIR), std::string::npos) << "artifacts live in the cache";
  BuildResult b = build(op, options(d.path));
  ASSERT_TRUE(b.ok) << all_diagnostics(b);
  EXPECT_TRUE(b.cache_hit);
  EXPECT_EQ(b.artifact, a.artifact);
  EXPECT_LT(b.seconds, 0.05) << "a cache hit must not run the compiler";
}

TEST(BuildCpu, SameSourceElsewhereHitsTheCache) {
  TempDir d1, d2;
  std::string src = unique_tag() + kReluCpu;
  BuildResult a = build(make_op(d1.path, "relu.default", {{"relu__default_implementation.cpp", src}}), options(d1.path));
  BuildResult b = build(make_op(d2.path, "relu.default", {{"relu__default_implementation.cpp", src}}), options(d2.path));
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_TRUE(b.cache_hit) << "the key must not depend on where the submission lives";
}

TEST(BuildCpu, AnyByteOfTheFolderChangesTheKey) {
  TempDir d;
  std::string tag = unique_tag();
  OpFolder op = make_op(d.path, "relu.default", {{"relu__default_implementation.cpp", tag + kReluCpu}, {"helper.h", "// 1\n"}});
  BuildResult a = build(op, options(d.path));
  std::ofstream(fs::path(op.dir) / "helper.h") << "// 2\n";
  BuildResult b = build(op, options(d.path));
  ASSERT_TRUE(a.ok && b.ok) << all_diagnostics(a) << all_diagnostics(b);
  EXPECT_NE(a.cache_key, b.cache_key);
  EXPECT_FALSE(b.cache_hit);
}

TEST(BuildCache, CorruptEntryIsDetectedAndRebuilt) {
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default", {{"relu__default_implementation.cpp", unique_tag() + kReluCpu}});
  BuildResult a = build(op, options(d.path));
  ASSERT_TRUE(a.ok) << all_diagnostics(a);
  {
    // Flip bytes in the middle of the cached artifact.
    std::fstream f(a.artifact, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(a.artifact) / 2));
    f.write("KGKGKGKG", 8);
  }
  BuildResult b = build(op, options(d.path));
  ASSERT_TRUE(b.ok) << all_diagnostics(b);
  EXPECT_FALSE(b.cache_hit) << "a corrupt entry must not be served";
  BuildResult c = build(op, options(d.path));
  EXPECT_TRUE(c.cache_hit);
  // A truncated manifest is corrupt too.
  std::ofstream(fs::path(c.artifact).parent_path() / "MANIFEST") << "kernelgate-cache 1\n";
  BuildResult e = build(op, options(d.path));
  ASSERT_TRUE(e.ok);
  EXPECT_FALSE(e.cache_hit);
}

TEST(BuildCache, ConcurrentBuildsOfOneKeyAgree) {
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default", {{"relu__default_implementation.cpp", unique_tag() + kReluCpu}});
  BuildResult r[2];
  std::thread t0([&] { r[0] = build(op, options(d.path)); });
  std::thread t1([&] { r[1] = build(op, options(d.path)); });
  t0.join();
  t1.join();
  ASSERT_TRUE(r[0].ok) << all_diagnostics(r[0]);
  ASSERT_TRUE(r[1].ok) << all_diagnostics(r[1]);
  EXPECT_EQ(r[0].artifact, r[1].artifact);
  cache::Entry e;
  EXPECT_TRUE(cache::lookup(KG_TEST_CACHE_DIR, r[0].cache_key, &e)) << "the published entry is whole";
  // Nothing of the loser is left behind in tmp/.
  for (const auto& f : fs::directory_iterator(fs::path(KG_TEST_CACHE_DIR) / "tmp"))
    EXPECT_EQ(f.path().filename().string().find(r[0].cache_key.substr(0, 16)), std::string::npos) << f.path();
}

TEST(BuildCpu, CompileErrorIsStructuredAndRelative) {
  TempDir d;
  OpFolder op = make_op(
      d.path, "relu.default",
      {{"relu__default_implementation.cpp",
        "#include <ATen/ATen.h>\nat::Tensor relu__default_kernel_impl(const at::Tensor& self) {\n  return self.no_such_method();\n}\n"}});
  BuildResult r = build(op, options(d.path));
  ASSERT_FALSE(r.ok);
  ASSERT_FALSE(r.diagnostics.empty()) << r.log;
  const Diagnostic& e = r.diagnostics.front();
  EXPECT_EQ(e.file, "relu__default/relu__default_implementation.cpp");
  EXPECT_EQ(e.line, 3);
  EXPECT_GT(e.column, 0);
  EXPECT_EQ(e.severity, "error");
  EXPECT_NE(e.message.find("no_such_method"), std::string::npos);
  EXPECT_EQ(r.log.find(d.path), std::string::npos) << "no host paths in the log";
  EXPECT_EQ(r.log.find(KG_TEST_CACHE_DIR), std::string::npos) << "no cache paths in the log";
}

TEST(BuildCpu, UndefinedReferenceIsTheLinkersLine) {
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default",
                        {{"relu__default_implementation.cpp",
                          "#include <ATen/ATen.h>\nat::Tensor helper_defined_nowhere(const at::Tensor& x);\n"
                          "at::Tensor relu__default_kernel_impl(const at::Tensor& self) { return helper_defined_nowhere(self); }\n"}});
  BuildResult r = build(op, options(d.path));
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind("link failed: undefined reference to ", 0), 0u) << r.error << "\n" << r.log;
  EXPECT_NE(r.error.find("helper_defined_nowhere(at::Tensor const&)"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("(in relu__default_kernel_impl(at::Tensor const&))"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find("expected signature"), std::string::npos) << "the entry point is there: " << r.error;
}

TEST(BuildCpu, MisnamedEntryPointIsAnUndefinedReferenceWithTheExpectedSignature) {
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default",
                        {{"relu__default_implementation.cpp",
                          "#include <ATen/ATen.h>\nat::Tensor relu_kernel_impl(const at::Tensor& self) { return self.clamp_min(0); }\n"}});
  BuildResult r = build(op, options(d.path));
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("relu__default_kernel_impl"), std::string::npos) << r.error << "\n" << r.log;
  EXPECT_NE(r.error.find("expected signature: at::Tensor relu__default_kernel_impl(const at::Tensor& self)"), std::string::npos) << r.error;
}

TEST(BuildCpu, IncludingAHostFileFailsInTheSandbox) {
  // The compile child sees the toolchain, headers and the op folder (as a copy), nothing else.
  TempDir d;
  std::ofstream(d.path + "/secret.txt") << "42\n";
  OpFolder op =
      make_op(d.path, "relu.default", {{"relu__default_implementation.cpp", "#include \"" + d.path + "/secret.txt\"\n" + kReluCpu}});
  BuildResult r = build(op, options(d.path));
  EXPECT_FALSE(r.ok);
}

TEST(BuildDiagnostics, ParsesGccAndEdgForms) {
  auto ds = parse_diagnostics(
      "/sub/relu__default/x.cu(12): error: identifier \"foo\" is undefined\n"
      "/sub/relu__default/x.cpp:3:10: fatal error: y.h: No such file or directory\n"
      "In file included from kg_glue.cc:4:\n"
      "relu__default/x.cu(7): warning #177-D: variable \"z\" was declared but never referenced\n"
      "random text: with: colons\n",
      "/sub/");
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds[0].file, "relu__default/x.cu");
  EXPECT_EQ(ds[0].line, 12);
  EXPECT_EQ(ds[0].severity, "error");
  EXPECT_EQ(ds[1].file, "relu__default/x.cpp");
  EXPECT_EQ(ds[1].column, 10);
  EXPECT_EQ(ds[1].severity, "error");
  EXPECT_EQ(ds[2].severity, "warning");
}

TEST(BuildDiagnostics, LinkerComplaintInGoldAndBfdForms) {
  EXPECT_EQ(linker_complaint("/tmp/ccA.o:kg_glue.cc:function g(at::Tensor const&): error: undefined reference to 'f(int)'\n"
                             "collect2: error: ld returned 1 exit status\n"),
            "undefined reference to 'f(int)' (in g(at::Tensor const&))");
  EXPECT_EQ(linker_complaint("/usr/bin/ld: /tmp/ccB.o: in function `g(at::Tensor const&)':\n"
                             "kg_glue.cc:(.text+0x1d): undefined reference to `f(int)'\n"
                             "collect2: error: ld returned 1 exit status\n"),
            "undefined reference to `f(int)' (in g(at::Tensor const&))");
  EXPECT_EQ(linker_complaint("/usr/bin/ld: cannot find -lnothere: No such file or directory\ncollect2: error: ld returned 1 exit status\n"),
            "/usr/bin/ld: cannot find -lnothere: No such file or directory");
  EXPECT_EQ(linker_complaint("kg_glue.cc:3:1: error: expected ';'\n"), "");
}

TEST(BuildDiagnostics, UndefinedReferencesInEveryLinkerForm) {
  const std::string log =
      "kg_unit.o:kg_unit.cudafe1.cpp:function f(at::Tensor const&): error: undefined reference to 'cublasSgemm_v2'\n"
      "kg_unit.o:kg_unit.cudafe1.cpp:function f(at::Tensor const&): error: undefined reference to 'cublasSgemm_v2'\n"
      "/usr/bin/ld: kg_unit.o: in function `f':\nkg_unit.cu:(.text+0x1c): undefined reference to `cublasCreate_v2'\n"
      "/usr/bin/ld: kg_unit.o: undefined reference to symbol 'cublasSetStream_v2@@libcublas.so.12'\n"
      "ld.lld: error: undefined symbol: cudnnCreate\n>>> referenced by kg_unit.cu\n"
      "collect2: error: ld returned 1 exit status\n";
  EXPECT_EQ(undefined_references(log),
            (std::vector<std::string>{"cublasSgemm_v2", "cublasCreate_v2", "cublasSetStream_v2", "cudnnCreate"}));
  EXPECT_TRUE(undefined_references("kg_glue.cc:3:1: error: expected ';'\n").empty());
}

TEST(LoaderUtil, CppStringLiteralEscapesEverythingButPrintableAscii) {
  EXPECT_EQ(cpp_string_literal("gelu(Tensor self, *, str approximate=\"none\") -> Tensor"),
            "\"gelu(Tensor self, *, str approximate=\\\"none\\\") -> Tensor\"");
  EXPECT_EQ(cpp_string_literal("a\\b\n??=\x01\xc3\xa9"
                               "7"),
            "\"a\\\\b\\012\\077\\077=\\001\\303\\2517\"");
  EXPECT_EQ(cpp_string_literal(""), "\"\"");
}

TEST(BuildCpu, SchemaWithStringDefaultRegisters) {
  // gelu's `str approximate="none"` is embedded as a C++ literal in the glue.
  TempDir d;
  write_stubs(d.path, {"gelu.default"}, Kind::Cpu);
  const ScanResult scan = scan_submission(d.path);
  ASSERT_EQ(scan.ops.size(), 1u);
  BuildResult r = build(scan.ops[0], options(d.path));
  EXPECT_TRUE(r.ok) << all_diagnostics(r);
}

TEST(BuildCpu, TorchExtensionHeaderIsTheShimWithTorchDtypeNames) {
  // The real <torch/extension.h> needs Python's headers; the cpu kind gets the shim's instead.
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default",
                        {{"relu__default_implementation.cpp",
                          unique_tag() + "#include <torch/extension.h>\n"
                                         "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) {\n"
                                         "  static_assert(torch::kFloat32 == at::kFloat && torch::kBFloat16 == at::kBFloat16 &&\n"
                                         "                torch::kInt32 == at::kInt && torch::kU8 == at::kByte, \"dtype names\");\n"
                                         "  TORCH_CHECK(torch::Device(torch::kCUDA, 0).is_cuda());\n"
                                         "  torch::Dtype dt = torch::kFloat64;\n"
                                         "  return torch::empty_like(self, torch::TensorOptions().dtype(dt).layout(torch::kStrided));\n"
                                         "}\n"}});
  BuildResult r = build(op, options(d.path));
  EXPECT_TRUE(r.ok) << all_diagnostics(r);
}

TEST(BuildDiagnostics, AreCapped) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "a.cpp:" + std::to_string(i + 1) + ":1: error: e\n";
  EXPECT_EQ(parse_diagnostics(text, "").size(), kMaxDiagnostics);
}

TEST(BuildCuda, ExampleBuildsWithNvcc) {
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  auto scan = scan_submission(example_dir("cuda/correct"));
  ASSERT_EQ(scan.ops.size(), 1u);
  EXPECT_EQ(scan.ops[0].kind, Kind::Cuda);
  BuildResult r = build(scan.ops[0], options(example_dir("cuda/correct")));
  ASSERT_TRUE(r.ok) << all_diagnostics(r);
  EXPECT_EQ(fs::path(r.artifact).extension(), ".so");
  if (!r.cache_hit) { EXPECT_TRUE(has_note(r, "host prefix precompiled")) << join_notes(r); }
  BuildResult again = build(scan.ops[0], options(example_dir("cuda/correct")));
  EXPECT_TRUE(again.cache_hit);
  EXPECT_LT(again.seconds, 0.05);
}

TEST(BuildCuda, EachChainPreprocessesOnlyTheSubmissionsPart) {
  // The prefix's preprocessed text is joined with the rest's (pp_splice.h), in both chains; the
  // artifact is the one the example builds: same entry, and the kernel launches where a GPU is.
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default",
                        {{"relu__default_implementation.cu",
                          unique_tag() + read(example_dir("cuda/correct/relu__default/relu__default_implementation.cu"))}});
  BuildResult r = build(op, options(d.path));
  ASSERT_TRUE(r.ok) << all_diagnostics(r);
  EXPECT_TRUE(has_note(r, "prefix preprocessed once: the host chain")) << join_notes(r);
  EXPECT_TRUE(has_note(r, "prefix preprocessed once: the device chain")) << join_notes(r);
  EXPECT_TRUE(has_note(r, "host prefix precompiled")) << join_notes(r);
}

TEST(BuildCuda, ReachingAPrefixHeaderByItsPathPreprocessesWhole) {
  // A #pragma once header of the prefix included again by its absolute path: no stand-in shadows
  // it, so the join is refused, each chain preprocesses the whole unit, and the header is read
  // once, as g++ alone would.
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  std::string once;
  std::vector<std::string> dirs = toolchain::torch_include_dirs();
  dirs.push_back("/usr/include");
  for (const char* name : {"ATen/core/Tensor.h", "c10/core/TensorImpl.h", "c10/core/ScalarType.h", "c10/util/Half.h"})
    for (const auto& dir : dirs) {
      std::string text;
      if (once.empty() && read_file(dir + "/" + name, &text) && splice::has_pragma_once(text))
        once = fs::weakly_canonical(dir + "/" + name).string();
    }
  ASSERT_FALSE(once.empty()) << "no #pragma once header of the prefix among the candidates";
  TempDir d;
  const std::string src = unique_tag() + "#include <torch/extension.h>\n#include \"" + once + "\"\n" +
                          "__global__ void k(c10::Half* x) { x[0] = x[1]; }\n"
                          "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) {\n"
                          "  k<<<1, 1>>>(self.data_ptr<c10::Half>());\n"
                          "  return self;\n"
                          "}\n";
  OpFolder op = make_op(d.path, "relu.default", {{"relu__default_implementation.cu", src}});
  BuildResult r = build(op, options(d.path));
  ASSERT_TRUE(r.ok) << all_diagnostics(r);
  EXPECT_FALSE(has_note(r, "prefix preprocessed once")) << join_notes(r);
  EXPECT_TRUE(has_note(r, "host prefix precompiled")) << join_notes(r);
}

TEST(BuildCuda, WrongSignatureNamesTheExpectedOne) {
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default",
                        {{"relu__default_implementation.cu",
                          "#include <torch/extension.h>\n__global__ void k(float* x) {}\n"
                          "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self, int64_t extra) { return self; }\n"}});
  BuildResult r = build(op, options(d.path));
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("expected signature: at::Tensor relu__default_kernel_impl(const at::Tensor& self)"), std::string::npos)
      << all_diagnostics(r);
}

TEST(BuildCuda, DeviceCompileErrorPointsIntoTheSubmission) {
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default",
                        {{"relu__default_implementation.cu",
                          "#include <torch/extension.h>\n__global__ void k(float* x) {\n  x[0] = undefined_thing;\n}\n"
                          "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) { return self; }\n"}});
  BuildResult r = build(op, options(d.path));
  ASSERT_FALSE(r.ok);
  // Reported once: cudafe++ and cicc both parse the unit, and only one of their logs is shown.
  int found = 0;
  for (const auto& diag : r.diagnostics)
    found += diag.file == "relu__default/relu__default_implementation.cu" && diag.line == 3 && diag.severity == "error";
  EXPECT_EQ(found, 1) << all_diagnostics(r);
}

TEST(BuildCuda, DeviceAssemblerErrorIsReported) {
  // Only the device chain (ptxas) sees this one: its log must come back, and the op's error quotes it.
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  OpFolder op =
      make_op(d.path, "relu.default",
              {{"relu__default_implementation.cu", unique_tag() + "#include <torch/extension.h>\n"
                                                                  "__global__ void k(float* x) {\n"
                                                                  "  __shared__ float big[1 << 17];\n"
                                                                  "  big[threadIdx.x] = x[threadIdx.x];\n"
                                                                  "  __syncthreads();\n"
                                                                  "  x[threadIdx.x] = big[(threadIdx.x * 7) % 1024];\n"
                                                                  "}\n"
                                                                  "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) {\n"
                                                                  "  k<<<1, 32>>>(self.data_ptr<float>());\n"
                                                                  "  return self;\n"
                                                                  "}\n"}});
  BuildResult r = build(op, options(d.path));
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.log.find("too much shared data"), std::string::npos) << r.log;
  // ptxas's complaint has no file and line: the summary quotes it, never a bare "compilation failed".
  EXPECT_TRUE(r.diagnostics.empty() || r.diagnostics[0].severity != "error") << "the case this covers: no parsed error";
  EXPECT_NE(r.error.find("too much shared data"), std::string::npos) << r.error;
}

TEST(BuildCuda, NvccWholeBuildsTheSameUnit) {
  // BuildOptions::nvcc_whole runs nvcc as one process (the benchmark's comparison): it builds,
  // under a cache key of its own.
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default",
                        {{"relu__default_implementation.cu",
                          unique_tag() + read(example_dir("cuda/correct/relu__default/relu__default_implementation.cu"))}});
  BuildOptions whole = options(d.path);
  whole.nvcc_whole = true;
  BuildResult a = build(op, whole);
  ASSERT_TRUE(a.ok) << all_diagnostics(a);
  BuildResult b = build(op, options(d.path));
  ASSERT_TRUE(b.ok) << all_diagnostics(b);
  EXPECT_FALSE(b.cache_hit);
  EXPECT_NE(a.cache_key, b.cache_key);
  EXPECT_TRUE(has_note(a, "nvcc whole")) << join_notes(a);
  EXPECT_FALSE(has_note(a, "host prefix precompiled")) << join_notes(a);
  EXPECT_TRUE(has_note(b, "host prefix precompiled")) << join_notes(b);
  // The same unit either way: the same kernels and entry in both artifacts.
  EXPECT_NE(defined_symbols(b.artifact).find("kg_entry_relu__default"), std::string::npos) << defined_symbols(b.artifact);
  EXPECT_EQ(defined_symbols(a.artifact), defined_symbols(b.artifact));
}

TEST(BuildNvrtc, ExampleBuildsACubin) {
  if (!kind_unavailable(Kind::Nvrtc).empty()) GTEST_SKIP() << kind_unavailable(Kind::Nvrtc);
  auto scan = scan_submission(example_dir("nvrtc/correct"));
  ASSERT_EQ(scan.ops.size(), 1u);
  EXPECT_EQ(scan.ops[0].kind, Kind::Nvrtc);
  BuildResult r = build(scan.ops[0], options(example_dir("nvrtc/correct")));
  ASSERT_TRUE(r.ok) << all_diagnostics(r);
  EXPECT_EQ(fs::path(r.artifact).extension(), ".cubin");
  std::string launch = read(r.launch_file);
  EXPECT_NE(launch.find("lowered relu<float>\t_Z4reluIfEvPKT_PS0_x"), std::string::npos) << launch;
  BuildResult again = build(scan.ops[0], options(example_dir("nvrtc/correct")));
  EXPECT_TRUE(again.cache_hit);
}

TEST(BuildNvrtc, CompileErrorIsStructured) {
  if (!kind_unavailable(Kind::Nvrtc).empty()) GTEST_SKIP() << kind_unavailable(Kind::Nvrtc);
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default",
                        {{"relu__default_implementation.cu", "extern \"C\" __global__ void k(float* x) {\n  x[0] = nope;\n}\n"},
                         {"kernelgate.toml", "[launch]\nkernel = \"k\"\ngrid = [1]\nblock = [1]\nargs = [\"out0\"]\n"}});
  ASSERT_EQ(op.kind, Kind::Nvrtc);
  BuildResult r = build(op, options(d.path));
  ASSERT_FALSE(r.ok);
  ASSERT_FALSE(r.diagnostics.empty()) << r.log;
  EXPECT_EQ(r.diagnostics[0].file, "relu__default/relu__default_implementation.cu");
  EXPECT_EQ(r.diagnostics[0].line, 2);
  EXPECT_NE(r.diagnostics[0].message.find("nope"), std::string::npos);
}

TEST(BuildNvrtc, SourceNeedingTexturesBuilds) {
  // kg-nvrtc compiles with -minimal first (no texture or surface declarations); a source that
  // needs them is compiled again without it, and its errors are not those of the first try.
  if (!kind_unavailable(Kind::Nvrtc).empty()) GTEST_SKIP() << kind_unavailable(Kind::Nvrtc);
  TempDir d;
  OpFolder op =
      make_op(d.path, "relu.default",
              {{"relu__default_implementation.cu", unique_tag() + "extern \"C\" __global__ void k(float* out, cudaTextureObject_t t) {\n"
                                                                  "  out[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x);\n"
                                                                  "}\n"},
               {"kernelgate.toml", "[launch]\nkernel = \"k\"\ngrid = [1]\nblock = [1]\nargs = [\"out0\", 0]\n"}});
  BuildResult r = build(op, options(d.path));
  EXPECT_TRUE(r.ok) << all_diagnostics(r);
}

TEST(BuildNvrtc, MissingKernelIsAnError) {
  if (!kind_unavailable(Kind::Nvrtc).empty()) GTEST_SKIP() << kind_unavailable(Kind::Nvrtc);
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default",
                        {{"relu__default_implementation.cu", "extern \"C\" __global__ void k(float* x) {}\n"},
                         {"kernelgate.toml", "[launch]\nkernel = \"not_there\"\ngrid = [1]\nblock = [1]\nargs = [\"out0\"]\n"}});
  BuildResult r = build(op, options(d.path));
  ASSERT_FALSE(r.ok);
  EXPECT_NE(all_diagnostics(r).find("not_there"), std::string::npos) << all_diagnostics(r);
}

TEST(BuildNvrtc, LaunchTableErrorsCarryFileLineAndKey) {
  if (!kind_unavailable(Kind::Nvrtc).empty()) GTEST_SKIP() << kind_unavailable(Kind::Nvrtc);
  TempDir d;
  OpFolder op =
      make_op(d.path, "relu.default",
              {{"relu__default_implementation.cu", "extern \"C\" __global__ void k(float* x) {}\n"},
               {"kernelgate.toml", "[launch]\nkernel = \"k\"\ngrid = [\"ceil_div(numel(x), 256)\"]\nblock = [256]\nargs = [\"out0\"]\n"}});
  BuildResult r = build(op, options(d.path));
  ASSERT_FALSE(r.ok);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].file, "relu__default/kernelgate.toml");
  EXPECT_EQ(r.diagnostics[0].line, 3);
  EXPECT_NE(r.diagnostics[0].message.find("launch.grid[0]: unknown name 'x'"), std::string::npos) << r.diagnostics[0].message;
  EXPECT_NE(r.diagnostics[0].message.find("known: out0, self"), std::string::npos) << r.diagnostics[0].message;
}

TEST(BuildCuda, UnitNeedingAllOfATenStillBuilds) {
  // The lean <torch/extension.h> lacks most free functions; the build retries with all of ATen.
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  OpFolder op =
      make_op(d.path, "relu.default",
              {{"relu__default_implementation.cu",
                unique_tag() + "#include <torch/extension.h>\n"
                               "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) { return torch::sigmoid(self); }\n"}});
  BuildResult r = build(op, options(d.path));
  EXPECT_TRUE(r.ok) << all_diagnostics(r);
  // Built twice, the second time against all of ATen: a prefix of its own, so the host compile
  // reads the whole of cudafe++'s output.
  EXPECT_TRUE(has_note(r, "all of ATen")) << join_notes(r);
  EXPECT_FALSE(has_note(r, "host prefix precompiled")) << join_notes(r);
}

TEST(BuildCuda, LeanShimKeepsDeviceOfGuardsAndListSignatures) {
  // The lean shim replaces ATen/DeviceGuard.h and the unit includes List.h only for signatures
  // that need it: device_of, the guards and a c10::List argument must still build without the
  // all-of-ATen retry (which would also hide a broken lean set).
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  OpFolder op =
      make_op(d.path, "index.Tensor",
              {{"index__Tensor_implementation.cu",
                unique_tag() + "#include <torch/extension.h>\n"
                               "#ifdef KG_FULL_ATEN\n#error the lean shim fell back to all of ATen\n#endif\n"
                               "__global__ void touch(float* p) { if (p) p[0] = 0.f; }\n"
                               "torch::Tensor index__Tensor_kernel_impl(const torch::Tensor& self,\n"
                               "                                        const c10::List<c10::optional<torch::Tensor>>& indices) {\n"
                               "  const at::OptionalDeviceGuard guard(device_of(self));\n"
                               "  c10::optional<torch::Tensor> first = indices.size() ? indices.get(0) : c10::nullopt;\n"
                               "  TORCH_CHECK(!first.has_value() || device_of(first) == at::device_of(self), \"devices differ\");\n"
                               "  touch<<<1, 1>>>(nullptr);\n"
                               "  return torch::empty_like(self);\n"
                               "}\n"}});
  BuildResult r = build(op, options(d.path));
  EXPECT_TRUE(r.ok) << all_diagnostics(r);
}

TEST(BuildCuda, LeanShimKeepsCudaStreamGuardsAndChecks) {
  // With a CUDA libtorch the lean shim gives the stream, guards and checks from c10 instead of
  // ATen/cuda/CUDAContext.h (cuBLAS, cuSPARSE, cuSOLVER): what load_inline kernels use must build
  // without the all-of-ATen retry.
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  if (!torch_has_cuda()) GTEST_SKIP() << "libtorch without CUDA: the shim has no CUDA part";
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default",
                        {{"relu__default_implementation.cu",
                          unique_tag() + "#include <torch/extension.h>\n"
                                         "#ifdef KG_FULL_ATEN\n#error the lean shim fell back to all of ATen\n#endif\n"
                                         "__global__ void k(const float* in, float* out, int64_t n) {\n"
                                         "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
                                         "  if (i < n) out[i] = in[i] > 0.f ? in[i] : 0.f;\n"
                                         "}\n"
                                         "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) {\n"
                                         "  const at::cuda::OptionalCUDAGuard guard(self.device());\n"
                                         "  c10::cuda::CUDAGuard guard2(self.get_device());\n"
                                         "  cudaStream_t stream = at::cuda::getCurrentCUDAStream();\n"
                                         "  const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;\n"
                                         "  AT_CUDA_CHECK(cudaGetLastError());\n"
                                         "  auto x = self.contiguous();\n"
                                         "  auto out = torch::empty_like(x);\n"
                                         "  k<<<sms, 256, 0, stream>>>(x.data_ptr<float>(), out.data_ptr<float>(), x.numel());\n"
                                         "  C10_CUDA_KERNEL_LAUNCH_CHECK();\n"
                                         "  C10_CUDA_CHECK(cudaStreamSynchronize(at::cuda::getStreamFromPool().stream()));\n"
                                         "  return out;\n"
                                         "}\n"}});
  BuildResult r = build(op, options(d.path));
  EXPECT_TRUE(r.ok) << all_diagnostics(r);
}

TEST(BuildCuda, CublasHandleRetriesWithAllOfATen) {
  // The cuBLAS handle is outside the lean set: the unit builds on the retry with all of ATen.
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  if (!torch_has_cuda()) GTEST_SKIP() << "libtorch without CUDA: at::cuda is not in the shim";
  TempDir d;
  OpFolder op =
      make_op(d.path, "relu.default",
              {{"relu__default_implementation.cu", unique_tag() + "#include <torch/extension.h>\n"
                                                                  "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) {\n"
                                                                  "  cublasHandle_t h = at::cuda::getCurrentCUDABlasHandle();\n"
                                                                  "  TORCH_CHECK(h != nullptr, \"no handle\");\n"
                                                                  "  return self.clamp_min(0);\n"
                                                                  "}\n"}});
  BuildResult r = build(op, options(d.path));
  EXPECT_TRUE(r.ok) << all_diagnostics(r);
}

TEST(BuildCuda, TorchDtypeNamesAreInTheShim) {
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default",
                        {{"relu__default_implementation.cu",
                          unique_tag() + "#include <torch/extension.h>\n"
                                         "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) {\n"
                                         "  TORCH_CHECK(self.scalar_type() == torch::kFloat32 && self.device().type() == torch::kCUDA);\n"
                                         "  return torch::empty_like(self, torch::TensorOptions().dtype(torch::kF32));\n"
                                         "}\n"}});
  BuildResult r = build(op, options(d.path));
  EXPECT_TRUE(r.ok) << all_diagnostics(r);
  EXPECT_FALSE(has_note(r, "all of ATen")) << "the lean shim has them: " << join_notes(r);
}

TEST(BuildCuda, DirectCublasCallFailsToLinkNamingIt) {
  // kernelgate links no vendor library: the linker's message names what the unit wanted.
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  OpFolder op =
      make_op(d.path, "relu.default",
              {{"relu__default_implementation.cu", unique_tag() + "#include <torch/extension.h>\n#include <cublas_v2.h>\n"
                                                                  "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) {\n"
                                                                  "  cublasHandle_t h = nullptr;\n"
                                                                  "  TORCH_CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);\n"
                                                                  "  return self.clamp_min(0);\n"
                                                                  "}\n"}});
  BuildResult r = build(op, options(d.path));
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("cublasCreate"), std::string::npos) << r.error << "\n" << r.log;
  EXPECT_EQ(undefined_references(r.log), std::vector<std::string>{"cublasCreate_v2"}) << r.log;
}

TEST(BuildCache, RelativeCacheRootBecomesAbsoluteAndClean) {
  // The sandbox binds only absolute, clean paths: KERNELGATE_CACHE=build/cache used to fail
  // every cold cuda build with "bind path must be absolute and clean".
  TempDir d;
  const fs::path before = fs::current_path();
  const char* old = std::getenv("KERNELGATE_CACHE");
  const std::string saved = old ? old : "";
  fs::current_path(d.path);
  ::setenv("KERNELGATE_CACHE", "build/./cache/", 1);
  std::string root;
  EXPECT_NO_THROW(root = kg::loader::cache_root());
  fs::current_path(before);
  if (old) ::setenv("KERNELGATE_CACHE", saved.c_str(), 1);
  else ::unsetenv("KERNELGATE_CACHE");
  EXPECT_EQ(root, (fs::weakly_canonical(d.path) / "build" / "cache").string());
  EXPECT_TRUE(fs::is_directory(root));
}

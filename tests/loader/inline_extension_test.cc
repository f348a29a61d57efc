// InlineExtension*: load_inline's calls as the runner reports them are checked field by field, keyed
// the way the runner keys them, built in the sandbox (cpu kind; cuda compiled where nvcc is), and
// the built library registers each named function with the types the dispatcher can carry.
#include "kernelgate/inline_extension.h"
#include "kernelgate/sha256.h"
#include "loader_test_util.h"
#include "toolchain.h"
#include "util.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <filesystem>

namespace fs = std::filesystem;
using namespace kg::loader;
using namespace kg::loader::test;

namespace {

std::vector<std::string> fields(const std::string& name, const std::string& cpp, const std::string& cuda, const std::string& functions,
                                const std::string& cflags = "", const std::string& cuda_cflags = "") {
  return {name, cpp, cuda, cuda.empty() ? "0" : "1", functions, cflags, cuda_cflags, ""};
}

// float, int and a list of int: types the dispatcher does not have, widened by the glue's adapter.
const char* kScaleCpu = R"(
#include <vector>
torch::Tensor scale_add(torch::Tensor x, float s, int n, std::vector<int> dims) {
  auto out = torch::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] * s + n + static_cast<float>(dims.size());
  return out;
}
float halve(float v) noexcept { return v / 2; }  // a noexcept function is a distinct type
)";

std::string notes_of(const BuildResult& r) { return "notes: " + join(r.notes, "; "); }

bool has_note(const BuildResult& r, const std::string& part) {
  for (const auto& n : r.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(InlineExtensionParse, ChecksEveryField) {
  EXPECT_NO_THROW(parse_inline_extension(fields("my_ext", "int f();", "", "f")));
  auto refused = [](const std::vector<std::string>& f, const std::string& says) {
    try {
      parse_inline_extension(f);
      ADD_FAILURE() << "accepted; expected an error saying " << says;
    } catch (const std::runtime_error& e) { EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what(); }
  };
  refused({"a", "b"}, "2 fields, expected 8");
  refused(fields("my ext", "", "", "f"), "load_inline's name");
  refused(fields("ok", "", "", "f;system"), "load_inline's functions: \"f;system\" is not a C++ function name");
  refused(fields("ok", "", "", "f\nf"), "named twice");
  refused(fields("ok", "", "", ""), "no function to register");
  refused(fields("ok", std::string("a\0b", 3), "", "f"), "cpp_sources: holds a NUL byte");
  refused(fields("ok", "", "", "f", "-O3\n-x\x01"), "extra_cflags: a flag with a byte outside printable ASCII");
  auto bad_cuda = fields("ok", "", "", "f");
  bad_cuda[3] = "yes";
  refused(bad_cuda, "with_cuda");
}

TEST(InlineExtensionParse, KeyIsOverEveryFieldAndRoundTrips) {
  const InlineExtension a = parse_inline_extension(fields("e", "int f();", "", "f"));
  EXPECT_EQ(inline_extension_key(a).size(), 64u);
  EXPECT_EQ(inline_extension_key(parse_inline_extension(inline_extension_fields(a))), inline_extension_key(a));
  // Field boundaries count: moving text from one field into the next is another extension.
  EXPECT_NE(inline_extension_key(parse_inline_extension(fields("e", "int f();", "", "f", "-O2"))), inline_extension_key(a));
  EXPECT_NE(inline_extension_key(parse_inline_extension(fields("e", "int f(); ", "", "f"))), inline_extension_key(a));
  // The runner's prelude computes sha256("kgext1\n" + "<bytes>:<text>" per field) over the same fields.
  EXPECT_EQ(inline_extension_key(a), kg::digest::sha256_hex("kgext1\n1:e8:int f();0:1:01:f0:0:0:"));
  EXPECT_EQ(inline_extension_namespace(inline_extension_key(a)), "kgext_" + inline_extension_key(a).substr(0, 16));
  EXPECT_EQ(inline_extension_file("ab"), "kgext-ab.so");
}

TEST(InlineExtensionBuild, CppSourcesRegisterEachFunctionWithWidenedTypes) {
  TempDir d;
  const InlineExtension ext =
      parse_inline_extension(fields("scale_ext", unique_tag() + kScaleCpu, "", "scale_add\nhalve", "-O3\n-fopenmp"));
  const BuildResult r = build_inline_extension(ext, options(d.path));
  ASSERT_TRUE(r.ok) << r.error << "\n" << r.log;
  const std::string key = inline_extension_key(ext);
  EXPECT_EQ(fs::path(r.artifact).filename().string(), inline_extension_file(key));
  EXPECT_TRUE(has_note(r, "load_inline flags not applied: -fopenmp")) << notes_of(r);
  void* handle = ::dlopen(r.artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  const std::string ns = inline_extension_namespace(key);
  auto scale = c10::Dispatcher::singleton().findSchemaOrThrow((ns + "::scale_add").c_str(), "");
  EXPECT_EQ(toString(scale.schema()).rfind(ns + "::scale_add(Tensor _0, float _1, int _2, int[] _3) -> Tensor", 0), 0u)
      << toString(scale.schema());
  std::vector<c10::IValue> stack{at::arange(4, at::kFloat), 2.0, int64_t{3}, c10::IValue(std::vector<int64_t>{0, 1})};
  scale.callBoxed(&stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_TRUE(stack[0].toTensor().equal(at::arange(4, at::kFloat) * 2 + 5)) << stack[0].toTensor();
  auto halve = c10::Dispatcher::singleton().findSchemaOrThrow((ns + "::halve").c_str(), "");
  std::vector<c10::IValue> h{3.0};
  halve.callBoxed(&h);
  EXPECT_DOUBLE_EQ(h.at(0).toDouble(), 1.5);
  const BuildResult again = build_inline_extension(ext, options(d.path));
  EXPECT_TRUE(again.ok && again.cache_hit) << "the same call is a cache hit";
  EXPECT_TRUE(has_note(again, "load_inline flags not applied: -fopenmp")) << "said on a hit too; " << notes_of(again);
}

TEST(InlineExtensionBuild, ACompileErrorIsShownAtTheLineOfTheCall) {
  TempDir d;
  // Line 1 of main.cpp is load_inline's own #include; the sources start on line 2.
  const InlineExtension ext =
      parse_inline_extension(fields("broken", "torch::Tensor f(torch::Tensor x) { return y; }\n// " + unique_tag() + "\n", "", "f"));
  const BuildResult r = build_inline_extension(ext, options(d.path));
  ASSERT_FALSE(r.ok);
  bool found = false;
  for (const auto& diag : r.diagnostics) found |= diag.file == "load_inline(broken)/main.cpp" && diag.line == 2 && diag.severity == "error";
  EXPECT_TRUE(found) << all_diagnostics(r) << "\n" << r.log;
}

TEST(InlineExtensionBuild, AFunctionTheSourcesDoNotDefineIsACompileError) {
  TempDir d;
  const InlineExtension ext =
      parse_inline_extension(fields("missing", "// " + unique_tag() + "\nint g() { return 1; }\n", "", "not_there"));
  const BuildResult r = build_inline_extension(ext, options(d.path));
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.log.find("not_there"), std::string::npos) << r.log;
}

TEST(InlineExtensionBuild, CudaSourcesBuildWithTheCudaKind) {
  if (!kind_unavailable(Kind::Cuda).empty()) GTEST_SKIP() << kind_unavailable(Kind::Cuda);
  TempDir d;
  const std::string cuda = "// " + unique_tag() + R"(
__global__ void relu_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu_cuda(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
)";
  const InlineExtension ext = parse_inline_extension(
      fields("relu_ext", "torch::Tensor relu_cuda(torch::Tensor x);", cuda, "relu_cuda", "", "-O3\n--use_fast_math\n-lineinfo"));
  const BuildResult r = build_inline_extension(ext, options(d.path));
  ASSERT_TRUE(r.ok) << r.error << "\n" << r.log << "\n" << notes_of(r);
  EXPECT_EQ(fs::path(r.artifact).filename().string(), inline_extension_file(inline_extension_key(ext)));
  EXPECT_TRUE(has_note(r, "nvcc run whole for the extension's flags: --use_fast_math")) << notes_of(r);
  EXPECT_TRUE(has_note(r, "load_inline flags not applied: -lineinfo")) << notes_of(r);
  EXPECT_NE(defined_symbols(r.artifact).find("relu_cuda"), std::string::npos);
}

// BuildFidelity: correct kernels build and are never accused for kernelgate's own doing. A reused
// --out folder still gets a fresh toolchain baseline, and a baseline that cannot be built is
// kernelgate's error, not the submission's; schemas with string defaults build; torch:: dtype
// names build in both kinds; a kernel calling cuBLAS is forbidden_library with the linker's
// message kept.
#include "e2e_util.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kg::e2e;

namespace {

json only_op(const fs::path& out) {
  const json res = load_results(out);
  EXPECT_EQ(res["ops"].size(), 1u) << res.dump(2);
  return res["ops"].empty() ? json() : res["ops"][0];
}

bool has_failure(const json& op, const std::string& category) {
  for (const auto& f : op["failures"])
    if (f["category"] == category) return true;
  return false;
}

std::string failure_message(const json& op, const std::string& category) {
  for (const auto& f : op["failures"])
    if (f["category"] == category) return f["evidence"]["message"].get<std::string>();
  return "";
}

// A cpu relu that names its dtypes through torch:: (as published load_inline kernels do).
constexpr const char* kTorchDtypeRelu =
    "// relu through <torch/extension.h> and torch::kFloat32-style dtype names (NaN kept).\n"
    "#include <torch/extension.h>\n"
    "at::Tensor relu__default_kernel_impl(const at::Tensor& self) {\n"
    "  at::Tensor x = self.contiguous();\n"
    "  at::Tensor out = torch::empty_like(x);\n"
    "  AT_DISPATCH_ALL_TYPES_AND2(torch::kHalf, torch::kBFloat16, x.scalar_type(), \"relu\", [&] {\n"
    "    const scalar_t* in = x.data_ptr<scalar_t>();\n"
    "    scalar_t* o = out.data_ptr<scalar_t>();\n"
    "    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] < scalar_t(0) ? scalar_t(0) : in[i];\n"
    "  });\n"
    "  static_assert(torch::kFloat32 == torch::kFloat && torch::kInt64 == torch::kLong && torch::kF16 == torch::kHalf, \"aliases\");\n"
    "  TORCH_CHECK(torch::Device(torch::kCPU).is_cpu() && torch::kStrided == torch::kStrided);\n"
    "  return out;\n"
    "}\n";

}  // namespace

TEST(BuildFidelity, ReusedOutFolderNeverChargesTheToolchain) {
  const fs::path out = temp_dir("fidelity-reused-out");
  for (int round = 0; round < 2; ++round) {
    const CommandResult r = run("eval " KG_SOURCE_DIR "/examples/correct --seed 1 --no-timing --out " + out.string());
    EXPECT_EQ(r.status, 0) << "round " << round << ": " << r.output;
    for (const auto& op : load_results(out)["ops"]) {
      EXPECT_EQ(op["verdict"], "pass") << "round " << round << ": " << op.dump(2);
      EXPECT_TRUE(op["violations"].empty()) << "round " << round << ": " << op.dump(2);
    }
  }
  if (const std::string why = cuda_kind_missing(); !why.empty()) GTEST_SKIP() << why;
  // The cuda kind: built and statically inspected here, not run (no GPU is asked for).
  const fs::path cuda_out = temp_dir("fidelity-reused-out-cuda");
  for (int round = 0; round < 2; ++round) {
    const CommandResult r =
        run("eval " KG_SOURCE_DIR "/examples/cuda/correct --device cpu --seed 1 --no-timing --out " + cuda_out.string());
    const json op = only_op(cuda_out);
    EXPECT_TRUE(op["violations"].empty()) << "round " << round << ": " << op.dump(2);
    EXPECT_TRUE(op["failures"].empty()) << "round " << round << ": " << op.dump(2);
    EXPECT_NE(op["error"].get<std::string>().find("built; not run"), std::string::npos) << op.dump(2);
    EXPECT_EQ(r.output.find("no toolchain baseline"), std::string::npos) << r.output;
  }
}

TEST(BuildFidelity, UnavailableBaselineIsKernelgatesErrorNotARule) {
  // syscall() is one of timer_tampering's imports, and the stub does not import it: the baseline is
  // consulted, and it cannot be written (its folder's parent is a file).
  const fs::path sub = temp_dir("fidelity-no-baseline");
  write(sub / "relu__default" / "relu__default_implementation.cpp",
        "// relu that also calls syscall(): a static finding the baseline must be consulted on.\n"
        "#include <ATen/ATen.h>\n#include <sys/syscall.h>\n#include <unistd.h>\n"
        "at::Tensor relu__default_kernel_impl(const at::Tensor& self) {\n"
        "  static long tid = syscall(SYS_gettid);\n  (void)tid;\n"
        "  at::Tensor x = self.contiguous();\n  at::Tensor out = at::empty_like(x);\n"
        "  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), \"relu\", [&] {\n"
        "    const scalar_t* in = x.data_ptr<scalar_t>();\n    scalar_t* o = out.data_ptr<scalar_t>();\n"
        "    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] < scalar_t(0) ? scalar_t(0) : in[i];\n  });\n"
        "  return out;\n}\n");
  const fs::path out = temp_dir("fidelity-no-baseline-out");
  write(out / "build" / "toolchain-baseline", "not a folder\n");
  const CommandResult r = run("eval " + sub.string() + " --seed 1 --no-timing --out " + out.string());
  EXPECT_EQ(r.status, 1) << r.output;
  const json op = only_op(out);
  EXPECT_EQ(op["verdict"], "error") << op.dump(2);
  EXPECT_TRUE(op["violations"].empty()) << op.dump(2);
  const std::string error = op["error"].get<std::string>();
  EXPECT_NE(error.find("toolchain baseline"), std::string::npos) << error;
  EXPECT_NE(error.find("cannot create"), std::string::npos) << "the reason is named: " << error;
  // With the baseline available the same kernel is judged: syscall() is the submission's own.
  const fs::path fresh = temp_dir("fidelity-no-baseline-fresh");
  run("eval " + sub.string() + " --seed 1 --no-timing --out " + fresh.string());
  const json judged = only_op(fresh);
  ASSERT_EQ(judged["violations"].size(), 1u) << judged.dump(2);
  EXPECT_EQ(judged["violations"][0]["rule"], "timer_tampering") << judged.dump(2);
}

TEST(BuildFidelity, BaselineStubLeftInTheOutFolderIsNeverUsed) {
  // A stub in --out that calls syscall() too would hide the submission's syscall() if it were built
  // as the baseline: kernelgate writes its own stub over it.
  const std::string relu_with_syscall =
      "// relu that also calls syscall().\n#include <ATen/ATen.h>\n#include <sys/syscall.h>\n#include <unistd.h>\n"
      "at::Tensor relu__default_kernel_impl(const at::Tensor& self) {\n"
      "  static long tid = syscall(SYS_gettid);\n  (void)tid;\n  throw std::runtime_error(\"not implemented\");\n}\n";
  const fs::path sub = temp_dir("fidelity-planted");
  write(sub / "relu__default" / "relu__default_implementation.cpp", relu_with_syscall);
  const fs::path out = temp_dir("fidelity-planted-out");
  write(out / "build" / "toolchain-baseline" / "cpu" / "relu__default" / "relu__default" / "relu__default_implementation.cpp",
        relu_with_syscall);
  run("eval " + sub.string() + " --seed 1 --no-timing --out " + out.string());
  const json op = only_op(out);
  ASSERT_EQ(op["violations"].size(), 1u) << op.dump(2);
  EXPECT_EQ(op["violations"][0]["rule"], "timer_tampering") << op.dump(2);
}

TEST(BuildFidelity, InitStubWithStringDefaultBuilds) {
  // gelu's schema has `str approximate="none"`: the glue embeds it in a C++ string literal.
  const fs::path sub = temp_dir("fidelity-gelu");
  const CommandResult init = run("init " + sub.string() + " --ops gelu.default");
  ASSERT_EQ(init.status, 0) << init.output;
  const fs::path out = temp_dir("fidelity-gelu-out");
  const CommandResult r = run("eval " + sub.string() + " --suite edge --seed 1 --no-timing --out " + out.string());
  EXPECT_EQ(r.status, 1) << r.output;
  for (const auto& op : load_results(out)["ops"]) {
    EXPECT_FALSE(has_failure(op, "compile_error")) << op.dump(2);
    EXPECT_TRUE(op["violations"].empty()) << op.dump(2);
    EXPECT_NE(op.dump().find("not implemented"), std::string::npos) << "the stub ran and threw: " << op.dump(2);
  }
}

TEST(BuildFidelity, TorchDtypeAliasesBuildInBothKinds) {
  const fs::path sub = temp_dir("fidelity-dtypes");
  write(sub / "relu__default" / "relu__default_implementation.cpp", kTorchDtypeRelu);
  const fs::path out = temp_dir("fidelity-dtypes-out");
  const CommandResult r = run("eval " + sub.string() + " --seed 1 --no-timing --out " + out.string());
  EXPECT_EQ(r.status, 0) << r.output;
  const json op = only_op(out);
  EXPECT_EQ(op["verdict"], "pass") << op.dump(2);
  EXPECT_TRUE(op["violations"].empty()) << op.dump(2);
  if (const std::string why = cuda_kind_missing(); !why.empty()) GTEST_SKIP() << why;
  const fs::path cuda = temp_dir("fidelity-dtypes-cuda");
  write(cuda / "relu__default" / "relu__default_implementation.cu",
        "// torch:: dtype and device names in a cuda-kind source.\n"
        "#include <torch/extension.h>\n"
        "__global__ void relu_kernel(const float* in, float* out, int64_t n) {\n"
        "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
        "  if (i < n) out[i] = in[i] > 0.f ? in[i] : 0.f;\n}\n"
        "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self) {\n"
        "  TORCH_CHECK(self.scalar_type() == torch::kFloat32 && self.device().type() == torch::kCUDA, \"f32 cuda\");\n"
        "  auto x = self.contiguous();\n"
        "  auto out = torch::empty_like(x, torch::TensorOptions().dtype(torch::kFloat32).layout(torch::kStrided));\n"
        "  const int64_t n = x.numel();\n"
        "  if (n) relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);\n"
        "  return out;\n}\n");
  const fs::path cuda_out = temp_dir("fidelity-dtypes-cuda-out");
  run("eval " + cuda.string() + " --device cpu --seed 1 --no-timing --out " + cuda_out.string());
  const json built = only_op(cuda_out);
  EXPECT_FALSE(has_failure(built, "compile_error")) << built.dump(2);
  EXPECT_NE(built["error"].get<std::string>().find("built; not run"), std::string::npos) << built.dump(2);
}

TEST(BuildFidelity, CublasCallIsForbiddenLibraryWithTheLinkerMessage) {
  if (const std::string why = cuda_kind_missing(); !why.empty()) GTEST_SKIP() << why;
  const std::string exploit = KG_SOURCE_DIR "/tests/exploits-cuda/cuda_cublas_side_stream";
  const fs::path out = temp_dir("fidelity-cublas");
  const CommandResult r = run("eval " + exploit + " --device cpu --seed 1 --no-timing --out " + out.string());
  EXPECT_EQ(r.status, 1) << r.output;
  const json op = only_op(out);
  EXPECT_EQ(op["verdict"], "rejected") << op.dump(2);
  ASSERT_EQ(op["violations"].size(), 1u) << op.dump(2);
  EXPECT_EQ(op["violations"][0]["rule"], "forbidden_library");
  EXPECT_NE(op["violations"][0]["evidence"].get<std::string>().find("cublasSgemm"), std::string::npos) << op.dump(2);
  const std::string message = failure_message(op, "compile_error");
  EXPECT_NE(message.find("cublas"), std::string::npos) << "the linker's own message is kept: " << op.dump(2);
  EXPECT_EQ(message.find("compilation failed"), std::string::npos) << message;
  // A policy that allows cuBLAS: no rule, and the build still fails with the linker's message.
  const fs::path pol = out / "allow-cublas.toml";
  write(pol, "name = \"allow-cublas\"\nbase = \"competition\"\n[libraries]\nallowed = [\"cublas\"]\n");
  const fs::path allowed_out = temp_dir("fidelity-cublas-allowed");
  run("eval " + exploit + " --device cpu --seed 1 --no-timing --policy " + pol.string() + " --out " + allowed_out.string());
  const json allowed = only_op(allowed_out);
  EXPECT_TRUE(allowed["violations"].empty()) << allowed.dump(2);
  EXPECT_NE(failure_message(allowed, "compile_error").find("cublas"), std::string::npos) << allowed.dump(2);
}

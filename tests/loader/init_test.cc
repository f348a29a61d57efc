// LoaderInit/BuildInit: `kernelgate init` stubs carry the expected signature and build.
#include "loader_test_util.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace fs = std::filesystem;
using namespace kg::loader;
using namespace kg::loader::test;

TEST(LoaderInit, StubCarriesTheExpectedSignature) {
  std::string s = stub_source("add_.Tensor", Kind::Cpu);
  EXPECT_NE(s.find("at::Tensor& add___Tensor_kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("not implemented"), std::string::npos);
  EXPECT_NE(stub_source("relu.default", Kind::Cuda).find("#include <torch/extension.h>"), std::string::npos);
  EXPECT_NE(stub_launch_toml("relu.default").find("args = [\"self\", \"out0\", \"numel(out0)\"]"), std::string::npos)
      << stub_launch_toml("relu.default");
}

TEST(LoaderInit, WritesFoldersAndNeverOverwrites) {
  TempDir d;
  InitResult r = write_stubs(d.path, {"relu.default", "add.Tensor", "nope.default"}, Kind::Cpu);
  EXPECT_EQ(r.written.size(), 2u);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].first, "nope.default");
  auto scan = scan_submission(d.path);
  EXPECT_EQ(scan.ops.size(), 2u);
  InitResult again = write_stubs(d.path, {"relu.default"}, Kind::Cpu);
  EXPECT_TRUE(again.written.empty());
  EXPECT_EQ(again.problems.size(), 1u);
}

class BuildInit : public ::testing::TestWithParam<Kind> {};

TEST_P(BuildInit, StubsBuild) {
  Kind kind = GetParam();
  if (!kind_unavailable(kind).empty()) GTEST_SKIP() << kind_unavailable(kind);
  TempDir d;
  std::vector<std::string> ops = {"relu.default", "add.Tensor"};
  if (kind == Kind::Cpu) ops.push_back("max.dim");  // a tuple return
  InitResult r = write_stubs(d.path, ops, kind);
  ASSERT_TRUE(r.problems.empty());
  for (const auto& op : scan_submission(d.path).ops) {
    EXPECT_EQ(op.kind, kind);
    BuildResult b = build(op, options(d.path));
    EXPECT_TRUE(b.ok) << op.op << ": " << all_diagnostics(b);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, BuildInit, ::testing::Values(Kind::Cpu, Kind::Cuda, Kind::Nvrtc),
                         [](const auto& info) { return std::string(kind_name(info.param)); });

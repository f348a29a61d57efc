// LoaderInitCli: `kernelgate init` as the command line runs it (tools/cmd_init.cc).
#include "loader_test_util.h"

#include <gtest/gtest.h>

#include <filesystem>

int kg_cmd_init(int argc, char** argv);

namespace fs = std::filesystem;
using namespace kg::loader;
using namespace kg::loader::test;

namespace {
int run(std::vector<std::string> args) {
  args.insert(args.begin(), "init");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return kg_cmd_init(static_cast<int>(argv.size()), argv.data());
}
}  // namespace

TEST(LoaderInitCli, WritesStubsOfTheAskedKind) {
  TempDir d;
  EXPECT_EQ(run({d.path + "/sub", "--ops", "relu.default,add_.Tensor", "--kind", "nvrtc"}), 0);
  EXPECT_TRUE(fs::exists(d.path + "/sub/relu__default/relu__default_implementation.cu"));
  EXPECT_TRUE(fs::exists(d.path + "/sub/add___Tensor/kernelgate.toml"));
  auto scan = scan_submission(d.path + "/sub");
  ASSERT_EQ(scan.ops.size(), 2u);
  EXPECT_EQ(scan.ops[0].kind, Kind::Nvrtc);
  EXPECT_EQ(run({d.path + "/sub", "--ops", "relu.default", "--kind", "nvrtc"}), 1) << "existing files are a problem, not overwritten";
}

TEST(LoaderInitCli, BadUsageIsExitTwo) {
  TempDir d;
  EXPECT_EQ(run({d.path}), 2);
  EXPECT_EQ(run({"--ops", "relu.default"}), 2);
  EXPECT_EQ(run({d.path, "--ops", "relu.default", "--kind", "rocm"}), 2);
  EXPECT_EQ(run({d.path, "--ops", "relu.nope"}), 1);
}

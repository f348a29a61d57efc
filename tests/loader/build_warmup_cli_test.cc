// BuildWarmupCli: `kernelgate warmup` as the command line runs it (tools/cmd_warmup.cc).
#include "loader_test_util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

int kg_cmd_warmup(int argc, char** argv);

namespace fs = std::filesystem;
using namespace kg::loader;
using namespace kg::loader::test;

namespace {

int run(std::vector<std::string> args) {
  args.insert(args.begin(), "warmup");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return kg_cmd_warmup(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

TEST(BuildWarmupCli, BadUsageIsExitTwo) {
  EXPECT_EQ(run({"--kind"}), 2);
  EXPECT_EQ(run({"--kind", "rocm"}), 2);
  EXPECT_EQ(run({"extra"}), 2);
  EXPECT_EQ(run({"--help"}), 0);
}

TEST(BuildWarmupCli, WarmsTheCpuKindIntoTheCacheRoot) {
  TempDir root;
  const char* old = std::getenv("KERNELGATE_CACHE");
  const std::string saved = old ? old : "";
  ::setenv("KERNELGATE_CACHE", (root.path + "/cache").c_str(), 1);
  const int status = run({"--kind", "cpu"});
  bool prelude = false;
  for (const auto& e : fs::directory_iterator(root.path + "/cache"))
    prelude |= e.path().filename().string().rfind("prelude-", 0) == 0 && fs::exists(e.path() / "kg_prelude.h.gch");
  EXPECT_EQ(run({"--kind", "nvrtc"}), kind_unavailable(Kind::Nvrtc).empty() ? 0 : 2) << "nothing to precompile, or not buildable here";
  if (old) ::setenv("KERNELGATE_CACHE", saved.c_str(), 1);
  else ::unsetenv("KERNELGATE_CACHE");
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(prelude) << "the precompiled prelude is in the cache root";
}

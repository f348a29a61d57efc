// `kernelgate merge` through the real binary on shard folders written here: the files it writes,
// its exit statuses, and a refusal's message.
#include "merge_fixtures.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace kg::results {
namespace {

using testing::op_json;
using testing::read_json;
using testing::run_identity;
using testing::scratch;
using testing::write_shard;
namespace fs = std::filesystem;

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr
};

CommandResult kernelgate(const std::string& args) {
  CommandResult r;
  FILE* p = ::popen((std::string(KG_BINARY) + " " + args + " 2>&1 </dev/null").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

void two_shards(const fs::path& base, const std::string& second_verdict) {
  write_shard(base / "s0", run_identity(0, 2), {{"alpha", json::array({op_json("relu.default", "pass", 2, 2, 1.5)})}});
  write_shard(base / "s1", run_identity(1, 2),
              {{"alpha", json::array({op_json("add.Tensor", second_verdict, 2, second_verdict == "pass" ? 2 : 1)})},
               {"beta", json::array({op_json("mm.default", "pass", 1, 1, 0.5)})}});
}

TEST(MergeCommand, WritesTheMergedRunAndExitsZeroWhenEverythingPassed) {
  const fs::path base = scratch("merge-cli-pass");
  two_shards(base, "pass");
  const fs::path out = base / "out";
  const CommandResult r = kernelgate("merge --out " + out.string() + " " + (base / "s1").string() + " " + (base / "s0").string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("2 submissions"), std::string::npos) << r.output;
  const json alpha = read_json(out / "alpha" / "results.json");
  ASSERT_EQ(alpha["ops"].size(), 2u);
  EXPECT_EQ(alpha["ops"][0]["op"], "add.Tensor");
  EXPECT_EQ(alpha["ops"][1]["op"], "relu.default");
  EXPECT_EQ(alpha["summary"]["ops"], 2);
  EXPECT_EQ(alpha["summary"]["wall_seconds"], 2.0);
  const json summary = read_json(out / "summary.json");
  EXPECT_EQ(summary["totals"]["ops"], 3);
  EXPECT_EQ(summary["run"]["shard"]["count"], 1);
  EXPECT_TRUE(fs::exists(out / "summary.csv"));
  EXPECT_TRUE(fs::exists(out / "summary.md"));
}

TEST(MergeCommand, ExitsOneWhenAnOpFailed) {
  const fs::path base = scratch("merge-cli-fail");
  two_shards(base, "fail");
  const CommandResult r =
      kernelgate("merge --out " + (base / "out").string() + " " + (base / "s0").string() + " " + (base / "s1").string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(read_json(base / "out" / "summary.json")["submissions"][0]["verdict"], "fail");
}

TEST(MergeCommand, MismatchedShardsAndBadUsageExitTwo) {
  const fs::path base = scratch("merge-cli-refuse");
  two_shards(base, "pass");
  RunIdentity other = run_identity(1, 2);
  other.policy = "audit";
  write_shard(base / "s1", other, {{"beta", json::array({op_json("mm.default", "pass", 1, 1)})}});
  CommandResult r = kernelgate("merge --out " + (base / "out").string() + " " + (base / "s0").string() + " " + (base / "s1").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find((base / "s1" / "summary.json").string() + ": run: policy (competition vs audit)"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(base / "out" / "summary.json"));

  r = kernelgate("merge --out " + (base / "out").string() + " " + (base / "s0").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("shards missing: 1 of 2"), std::string::npos) << r.output;

  EXPECT_EQ(kernelgate("merge").status, 2);
  EXPECT_EQ(kernelgate("merge --out " + (base / "out").string()).status, 2) << "no shard folders";
  EXPECT_EQ(kernelgate("merge " + (base / "s0").string()).status, 2) << "no --out";
  EXPECT_EQ(kernelgate("merge --bogus --out x y").status, 2);
  const CommandResult help = kernelgate("merge --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.output.find("example:"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("Exit status: 0"), std::string::npos) << help.output;
}

}  // namespace
}  // namespace kg::results

// `kernelgate eval --batch` through the real binary: parallel jobs with runners started ahead judge
// as one-at-a-time with runners started on demand does,
// simulated device pools share the work and a crash costs only its runner, shards partition the
// work and merge back to the unsharded run, and bad batch input is a clear error.
#include "e2e_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <set>
#include <tuple>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kg::e2e;

namespace {

const std::string kExamples = std::string(KG_SOURCE_DIR) + "/examples";

void copy_op(const std::string& from, const fs::path& sub) {
  fs::create_directories(sub);
  fs::copy(from, sub / fs::path(from).filename(), fs::copy_options::recursive);
}

// Honest, buggy, crashing, broken and empty submissions of relu (and add), one op folder each or two.
fs::path make_batch(const fs::path& root, int honest) {
  const fs::path batch = root / "batch";
  for (int i = 0; i < honest; ++i) copy_op(kExamples + "/correct/relu__default", batch / ("honest" + std::to_string(i)));
  copy_op(kExamples + "/correct/add__Tensor", batch / "honest0");
  copy_op(kExamples + "/buggy/relu__default", batch / "buggy");
  write(batch / "crash/relu__default/relu__default_implementation.cpp",
        "#include <ATen/ATen.h>\n"
        "at::Tensor relu__default_kernel_impl(const at::Tensor& self) {\n"
        "  *static_cast<volatile int*>(nullptr) = 1;\n"
        "  return self;\n"
        "}\n");
  write(batch / "broken/relu__default/relu__default_implementation.cpp", "this is not C++\n");
  fs::create_directories(batch / "empty");
  return batch;
}

using Verdicts = std::map<std::pair<std::string, std::string>, std::tuple<std::string, int, int>>;

// (submission, op) -> (verdict, tests passed, tests total), from summary.json.
Verdicts verdicts(const fs::path& out) {
  Verdicts v;
  const json s = json::parse(read(out / "summary.json"));
  for (const auto& sub : s["submissions"])
    for (const auto& op : sub["ops"]) v[{sub["name"], op["op"]}] = {op["verdict"], op["tests"]["passed"], op["tests"]["total"]};
  return v;
}

std::string args(const fs::path& batch, const fs::path& out, const std::string& more) {
  return "eval --batch " + batch.string() + " --out " + out.string() + " --no-timing --seed 5 " + more;
}

// `kernelgate cmd` with the Slurm array's variables set ("A=1 B=2"), unset again afterwards.
CommandResult run_with_env(const std::string& assignments, const std::string& cmd) {
  std::istringstream in(assignments);
  std::vector<std::string> names;
  for (std::string a; in >> a;) {
    const size_t eq = a.find('=');
    names.push_back(a.substr(0, eq));
    ::setenv(names.back().c_str(), a.substr(eq + 1).c_str(), 1);
  }
  CommandResult r = run(cmd, 600);
  for (const std::string& n : names) ::unsetenv(n.c_str());
  return r;
}

const json* first_failure_of(const json& results) {
  for (const auto& op : results["ops"])
    if (!op["failures"].empty()) return &op["failures"][0];
  return nullptr;
}

}  // namespace

// The one-at-a-time run also starts every runner when it is needed (--no-runner-pool): runners
// started ahead, in a pool shared by the workers, give the same verdicts, a crash included.
TEST(Batch, ParallelJobsGiveTheVerdictsOfOneAtATime) {
  const fs::path root = temp_dir("batch-jobs");
  const fs::path batch = make_batch(root, 3);
  const CommandResult one = run(args(batch, root / "one", "--jobs 1 --no-runner-pool"), 600);
  const CommandResult par = run(args(batch, root / "par", "--jobs 3"), 600);
  ASSERT_EQ(one.status, 1) << one.output;
  ASSERT_EQ(par.status, 1) << par.output;
  const Verdicts a = verdicts(root / "one"), b = verdicts(root / "par");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 7u);  // honest0 has two ops; empty has none
  EXPECT_EQ(std::get<0>(a.at({"honest0", "add.Tensor"})), "pass");
  EXPECT_EQ(std::get<0>(a.at({"honest2", "relu.default"})), "pass");
  EXPECT_EQ(std::get<0>(a.at({"buggy", "relu.default"})), "fail");
  EXPECT_EQ(std::get<0>(a.at({"crash", "relu.default"})), "fail");
  EXPECT_EQ(std::get<0>(a.at({"broken", "relu.default"})), "fail");
  const json broken = load_results(root / "par" / "broken");
  ASSERT_NE(first_failure_of(broken), nullptr);
  EXPECT_EQ((*first_failure_of(broken))["category"], "compile_error");
  // The submission without op folders is in the summary, an error with its problem.
  const json s = json::parse(read(root / "par" / "summary.json"));
  bool empty_seen = false;
  for (const auto& sub : s["submissions"])
    if (sub["name"] == "empty") {
      empty_seen = true;
      EXPECT_EQ(sub["verdict"], "error");
    }
  EXPECT_TRUE(empty_seen);
  EXPECT_TRUE(fs::exists(root / "par" / "summary.csv"));
  EXPECT_TRUE(fs::exists(root / "par" / "summary.md"));
  // Every decided op is in the journal once (identity line first).
  std::istringstream journal(read(root / "par" / "journal.jsonl"));
  std::string line;
  int entries = -1;
  while (std::getline(journal, line)) ++entries;
  EXPECT_EQ(entries, 7);
  // The pool's runners are gone with their folders.
  EXPECT_FALSE(fs::exists(root / "par" / ".runners"));
  fs::remove_all(root);
}

TEST(Batch, SimulatedDevicePoolsShareTheWorkAndACrashCostsOnlyItsRunner) {
  const fs::path root = temp_dir("batch-pools");
  const fs::path batch = make_batch(root, 4);
  const CommandResult pooled = run(args(batch, root / "pools", "--jobs 3 --devices 3"), 600);
  const CommandResult single = run(args(batch, root / "single", "--jobs 1"), 600);
  ASSERT_EQ(pooled.status, 1) << pooled.output;
  EXPECT_EQ(verdicts(root / "pools"), verdicts(root / "single"));
  std::set<int> pools;
  for (const auto& e : fs::directory_iterator(root / "pools"))
    if (fs::exists(e.path() / "results.json")) pools.insert(load_results(e.path())["device_pool"].get<int>());
  EXPECT_EQ(pools, (std::set<int>{0, 1, 2}));
  const json crash = load_results(root / "pools" / "crash");
  ASSERT_NE(first_failure_of(crash), nullptr);
  EXPECT_EQ((*first_failure_of(crash))["category"], "crash") << crash.dump(1);
  fs::remove_all(root);
}

TEST(Batch, ShardsPartitionTheWorkAndMergeToTheUnshardedRun) {
  const fs::path root = temp_dir("batch-shards");
  const fs::path batch = make_batch(root, 3);
  ASSERT_EQ(run(args(batch, root / "all", "--jobs 2"), 600).status, 1);
  std::set<std::pair<std::string, std::string>> seen;
  std::string shard_dirs;
  for (int i = 0; i < 3; ++i) {
    const fs::path out = root / ("shard" + std::to_string(i));
    // Shard 1 from the Slurm array's environment, the others from --shard.
    const std::string cmd = i == 1 ? "eval --batch " + batch.string() + " --out " + out.string() + " --no-timing --seed 5"
                                   : args(batch, out, "--shard " + std::to_string(i) + "/3");
    const CommandResult r = i == 1 ? run_with_env("SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3", cmd) : run(cmd, 600);
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.output;
    const json s = json::parse(read(out / "summary.json"));
    EXPECT_EQ(s["run"]["shard"]["index"], i);
    for (const auto& [key, v] : verdicts(out)) EXPECT_TRUE(seen.insert(key).second) << key.first << " " << key.second << " in two shards";
    shard_dirs += " " + out.string();
  }
  const Verdicts all = verdicts(root / "all");
  EXPECT_EQ(seen.size(), all.size());
  const CommandResult merged = run("merge --out " + (root / "merged").string() + shard_dirs, 120);
  ASSERT_EQ(merged.status, 1) << merged.output;
  EXPECT_EQ(verdicts(root / "merged"), all);
  fs::remove_all(root);
}

TEST(Batch, BadBatchInputIsAClearError) {
  const fs::path root = temp_dir("batch-bad");
  const fs::path out = root / "out";
  CommandResult r = run("eval --batch " + (root / "missing").string() + " --out " + out.string(), 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find((root / "missing").string()), std::string::npos) << r.output;
  write(root / "list.txt", "# submissions\n" + (fs::path(kExamples) / "correct").string() + "\n\nno/such/dir\n");
  r = run("eval --batch-list " + (root / "list.txt").string() + " --out " + out.string(), 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("list.txt:4: no/such/dir is not a submission directory"), std::string::npos) << r.output;
  r = run("eval --batch " + root.string() + " " + kExamples + "/correct --out " + out.string(), 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("no submission directory"), std::string::npos) << r.output;
  r = run("eval --batch " + root.string() + " --shard 3/2 --out " + out.string(), 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--shard: a shard is I/N with 0 <= I < N"), std::string::npos) << r.output;
  r = run_with_env("SLURM_ARRAY_TASK_ID=x SLURM_ARRAY_TASK_COUNT=4", "eval --batch " + root.string() + " --out " + out.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("SLURM_ARRAY_TASK_ID"), std::string::npos) << r.output;
  r = run("eval " + kExamples + "/correct --resume --out " + out.string(), 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("batch options"), std::string::npos) << r.output;
  fs::remove_all(root);
}

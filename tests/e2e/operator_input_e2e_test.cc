// OperatorInput: input from the operator that is not a submission, through the real kernelgate
// binary: policy files and trace files that are FIFOs, devices or directories, and trace samples
// kernelgate cannot build or leaves out for size. Every command runs under `timeout`, so a
// blocking open shows as exit 124 instead of a hung test.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "e2e_util.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kg::e2e;

namespace {

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << "missing \"" << (part) << "\" in:\n" << (text)

// A trace file with an honest sample, one no tensor can be built for, and one of 2^40 elements.
const char* kTrace =
    "Operator: aten.add.Tensor\n"
    "cnt: 3, ((T([2, 3], f32), T([2, 3], f32)), {})\n"
    "cnt: 1, ((T([0, 4611686018427387904], f32), T([0, 4611686018427387904], f32)), {})\n"
    "cnt: 1, ((T([1099511627776], f32), T([1099511627776], f32)), {})\n";

}  // namespace

TEST(OperatorInput, PolicyShowOfDevZeroExits2Quickly) {
  CommandResult r = run("policy show /dev/zero", 20);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_CONTAINS(r.output, "/dev/zero: cannot read policy file: is a character device, not a regular file");
  EXPECT_LT(r.seconds, 10);
}

TEST(OperatorInput, EvalWithAFifoOrDirectoryPolicyExits2WithoutWaiting) {
  fs::path d = temp_dir("input-policy");
  const std::string fifo = (d / "fifo.toml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string dir = (d / "dir.toml").string();
  fs::create_directories(dir);
  const std::pair<std::string, std::string> cases[] = {{fifo, "is a FIFO"},
                                                       {dir, "is a directory"},
                                                       {"/dev/zero", "is a character device"}};
  for (const auto& [path, what] : cases) {
    CommandResult r = run("eval " KG_SOURCE_DIR "/examples/correct --no-timing --policy " + path + " --out " + (d / "out").string(), 30);
    EXPECT_EQ(r.status, 2) << path << ":\n" << r.output;  // 124 would be a blocking open
    EXPECT_CONTAINS(r.output, path + ": cannot read policy file: " + what);
  }
  fs::remove_all(d);
}

TEST(OperatorInput, EvalWithAnOutOfRangeLimitExits2NamingTheKey) {
  fs::path d = temp_dir("input-range");
  const fs::path pol = d / "long.toml";
  std::ofstream(pol) << "base = \"competition\"\n[limits]\nrun_call_time_s = 1e9\n";
  CommandResult r =
      run("eval " KG_SOURCE_DIR "/examples/correct --no-timing --policy " + pol.string() + " --out " + (d / "out").string(), 30);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_CONTAINS(r.output, pol.string() + ":3:19: key 'limits.run_call_time_s': 1e+09 is out of range (0 < x <= 3600)");
  fs::remove_all(d);
}

TEST(OperatorInput, FifoTraceFileIsNamedForWhatItIs) {
  fs::path d = temp_dir("input-fifo-trace");
  const std::string fifo = (d / "shapes.txt").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  CommandResult ops = run("ops --suite " + fifo, 30);
  EXPECT_EQ(ops.status, 2) << ops.output;
  EXPECT_CONTAINS(ops.output, "suite " + fifo + ": is a FIFO, not a trace file or a directory of them");
  CommandResult ev = run("eval --self-check --no-timing --suite " + fifo + " --out " + (d / "out").string(), 30);
  EXPECT_EQ(ev.status, 2) << ev.output;
  EXPECT_CONTAINS(ev.output, "is a FIFO");
  // A FIFO named *.txt inside a trace directory: refused on the opened file, without blocking.
  const fs::path dir = d / "dir";
  fs::create_directories(dir);
  std::ofstream(dir / "a.txt") << "Operator: aten.relu.default\ncnt: 1, ((T([4], f32),), {})\n";
  ASSERT_EQ(::mkfifo((dir / "b.txt").c_str(), 0600), 0);
  CommandResult in_dir = run("ops --suite " + dir.string(), 30);
  EXPECT_EQ(in_dir.status, 2) << in_dir.output;
  EXPECT_CONTAINS(in_dir.output, (dir / "b.txt").string() + ": cannot read trace file: is a FIFO, not a regular file");
  // Control: the same directory without the FIFO is a suite.
  fs::remove(dir / "b.txt");
  CommandResult ok = run("ops --suite " + dir.string(), 30);
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_CONTAINS(ok.output, "relu.default");
  fs::remove_all(d);
}

TEST(OperatorInput, OversizedTraceFileIsRefusedFromItsSize) {
  fs::path d = temp_dir("input-big-trace");
  const fs::path big = d / "big.txt";
  std::ofstream(big) << kTrace;
  fs::resize_file(big, std::uintmax_t{1} << 30);  // sparse: 1 GiB apparent, nothing to read
  CommandResult r = run("ops --suite " + big.string(), 30);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_CONTAINS(r.output, big.string() + ": cannot read trace file: is 1073741824 bytes, over the limit of 67108864 bytes");
  EXPECT_LT(r.seconds, 10);
  fs::remove_all(d);
}

TEST(OperatorInput, UnbuildableSampleIsSkippedAndListedNotAFailure) {
  fs::path d = temp_dir("input-unbuildable");
  const fs::path trace = d / "shapes.txt";
  std::ofstream(trace) << kTrace;

  CommandResult ops = run("ops --suite " + trace.string() + " --left-out", 60);
  EXPECT_EQ(ops.status, 0) << ops.output;
  EXPECT_CONTAINS(ops.output, "left out of " + trace.string() + ": add.Tensor at " + trace.string() +
                                  ":3: no tensor can be built for it: T([0, 4611686018427387904], f32): ");
  EXPECT_CONTAINS(ops.output, "left out of " + trace.string() + ": add.Tensor at " + trace.string() +
                                  ":4: 2199023255552 input elements, over the data suites' bound of 2^26");

  const fs::path out = d / "out";
  CommandResult ev = run("eval --self-check --no-timing --suite " + trace.string() + " --seed 7 --out " + out.string(), 300);
  ASSERT_EQ(ev.status, 0) << ev.output;
  std::ifstream f(out / "results.json");
  ASSERT_TRUE(f.good());
  json res = json::parse(f);
  const json* add = nullptr;
  for (const auto& o : res["ops"])
    if (o["op"] == "add.Tensor") add = &o;
  ASSERT_NE(add, nullptr) << res.dump(2);
  EXPECT_EQ((*add)["verdict"], "pass") << add->dump(2);
  EXPECT_EQ((*add)["tests"]["passed"], 1) << "the honest sample ran";
  EXPECT_TRUE((*add)["failures"].empty()) << add->dump(2);
  ASSERT_EQ((*add)["skipped"].size(), 1u) << add->dump(2);
  EXPECT_CONTAINS((*add)["skipped"][0]["sample"].get<std::string>(), "4611686018427387904");
  EXPECT_CONTAINS((*add)["skipped"][0]["reason"].get<std::string>(), trace.string() + ":3: no tensor can be built for it");
  fs::remove_all(d);
}

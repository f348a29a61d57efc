// AllStubs: every overload of every suite builds from its `kernelgate init` stub (cpu kind).
//
// ~650 overloads at 2-3 s a build would take half an hour, so each shard checks its share two ways
// through the loader's own functions: check_syntax() compiles every stub's registration glue as
// build() plans it (same flags, shim, precompiled prelude), many units to a compiler run, with
// -fsyntax-only; and build() runs for real (code generation, link) on one overload per distinct
// C++ signature, which is all the link depends on. Shards are separate tests, so ctest -j runs
// them side by side.
#include "loader_test_util.h"
#include "syntax_check.h"

#include "kernelgate/harness.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>
#include <set>

using namespace kg::loader;
using namespace kg::loader::test;

namespace {

constexpr int kShards = 8;
constexpr size_t kUnitsPerCompilerRun = 40;

// Every overload of the suites kernelgate ships, sorted.
const std::vector<std::string>& suite_overloads() {
  static const std::vector<std::string> all = [] {
    std::set<std::string> ops;
    for (const char* suite : {"smoke", "edge", "opinfo", "traces"})
      for (const auto& op : kg::harness::suite_ops(suite)) ops.insert(op);
    return std::vector<std::string>(ops.begin(), ops.end());
  }();
  return all;
}

std::string signature_shape(const std::string& op) {
  const Signature sig = cpp_signature(aten_schema(op));
  std::string key = sig.return_type + "(";
  for (const auto& t : sig.arg_types) key += t + ",";
  return key + ")";
}

// The first overload (in sorted order) of each distinct signature.
const std::set<std::string>& signature_representatives() {
  static const std::set<std::string> reps = [] {
    std::map<std::string, std::string> first;
    for (const auto& op : suite_overloads()) first.emplace(signature_shape(op), op);
    std::set<std::string> out;
    for (const auto& [shape, op] : first) out.insert(op);
    return out;
  }();
  return reps;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class AllStubs : public ::testing::TestWithParam<int> {};

}  // namespace

TEST(AllStubsList, CoversEverySuite) {
  // The suites' union; a suite that lost its data would shrink it.
  EXPECT_GE(suite_overloads().size(), 600u);
  EXPECT_GE(signature_representatives().size(), 50u);
  std::cout << suite_overloads().size() << " overloads, " << signature_representatives().size() << " distinct signatures\n";
}

TEST(SyntaxCheck, NamesOnlyTheFolderThatDoesNotCompile) {
  // Three units in one compiler run, the middle one broken: the run fails, the recheck unit by
  // unit puts the error on its folder alone.
  TempDir d;
  write_stubs(d.path, {"relu.default", "gelu.default", "add.Tensor"}, Kind::Cpu);
  make_op(d.path, "gelu.default", {{"gelu__default_implementation.cpp", "#include <ATen/ATen.h>\nint broken( {\n"}});
  const ScanResult scan = scan_submission(d.path);
  ASSERT_EQ(scan.ops.size(), 3u);
  const std::vector<SyntaxCheck> checked = check_syntax(scan.ops, options(d.path), 3);
  ASSERT_EQ(checked.size(), 3u);
  for (const auto& c : checked) {
    EXPECT_EQ(c.ok, c.op != "gelu.default") << c.op << ": " << c.log;
    if (c.op == "gelu.default") EXPECT_NE(c.log.find("gelu__default/src/gelu__default_implementation.cpp:2"), std::string::npos) << c.log;
    else EXPECT_EQ(c.log, "") << c.op;
  }
}

TEST_P(AllStubs, CompileEveryOneLinkOnePerSignature) {
  const int shard = GetParam();
  std::vector<std::string> ops;
  for (size_t i = 0; i < suite_overloads().size(); ++i)
    if (static_cast<int>(i % kShards) == shard) ops.push_back(suite_overloads()[i]);
  TempDir d;
  const InitResult init = write_stubs(d.path, ops, Kind::Cpu);
  for (const auto& [what, why] : init.problems) ADD_FAILURE() << "no stub for " << what << ": " << why;
  const ScanResult scan = scan_submission(d.path);
  ASSERT_EQ(scan.ops.size(), ops.size());

  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<SyntaxCheck> checked = check_syntax(scan.ops, options(d.path), kUnitsPerCompilerRun);
  const double check_s = seconds_since(t0);
  ASSERT_EQ(checked.size(), scan.ops.size());
  for (const auto& c : checked) EXPECT_TRUE(c.ok) << c.op << ": its stub does not compile:\n" << c.log.substr(0, 4000);

  const auto t1 = std::chrono::steady_clock::now();
  int built = 0, hits = 0;
  for (const auto& op : scan.ops) {
    if (!signature_representatives().count(op.op)) continue;
    const BuildResult b = build(op, options(d.path));
    EXPECT_TRUE(b.ok) << op.op << ": its stub does not build: " << b.error << "\n" << all_diagnostics(b);
    built++;
    hits += b.cache_hit;
  }
  std::cout << "shard " << shard << ": " << ops.size() << " stubs checked in " << check_s << " s; " << built << " built (" << hits
            << " from the cache) in " << seconds_since(t1) << " s\n";
}

INSTANTIATE_TEST_SUITE_P(Shards, AllStubs, ::testing::Range(0, kShards), [](const auto& info) { return std::to_string(info.param); });

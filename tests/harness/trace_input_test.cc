// TraceInput: trace samples kernelgate cannot build or leaves out for size are listed with their
// file and line, never handed to the evaluator as ordinary samples; trace files that are not
// regular files, or are over the size cap, are refused before anything is read.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <random>

#include "kernelgate/harness.h"
#include "suites.h"  // harness/src: trace_path_samples, LeftOut

namespace fs = std::filesystem;
using namespace kg::harness;

namespace {

kg::trace::TensorSpec spec(std::vector<int64_t> shape, const std::string& dtype, std::vector<int64_t> strides = {}) {
  kg::trace::TensorSpec t;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.has_strides = !strides.empty();
  t.strides = std::move(strides);
  return t;
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("kg-trace-input-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) { return e.what(); }
  ADD_FAILURE() << "expected an error";
  return "";
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << "missing \"" << (part) << "\" in: " << (text)

}  // namespace

TEST(TraceInput, UnmaterialisableSpecsSayWhy) {
  const int64_t big = int64_t{1} << 62;
  EXPECT_CONTAINS(unmaterialisable_reason(spec({0, big}, "f32")),
                  "dimension 0's stride of 4611686018427387904 elements overflows int64 in bytes");
  EXPECT_CONTAINS(unmaterialisable_reason(spec({4, big}, "u8")), "element count overflows int64");
  EXPECT_CONTAINS(unmaterialisable_reason(spec({2, 2}, "f32", {big, 1})), "stride of 4611686018427387904 elements overflows");
  EXPECT_CONTAINS(unmaterialisable_reason(spec({3, 2}, "f64", {big / 8, 1})), "storage it spans overflows int64 in bytes");
  EXPECT_CONTAINS(unmaterialisable_reason(spec({3, 2}, "f32", {-1, 1})), "negative stride -1");
  // Controls: buildable shapes, empty ones with large (but representable) dimensions included.
  EXPECT_EQ(unmaterialisable_reason(spec({0, int64_t{1} << 40}, "f32")), "");
  EXPECT_EQ(unmaterialisable_reason(spec({3, 0, int64_t{1} << 60}, "u8")), "");
  EXPECT_EQ(unmaterialisable_reason(spec({4, 8}, "f32", {1, 4})), "");
  EXPECT_EQ(unmaterialisable_reason(spec({}, "f64")), "");
}

TEST(TraceInput, MakeInputsSkipsAnUnbuildableSampleInsteadOfFailing) {
  Sample s;
  s.op = "add.Tensor";
  s.call = kg::trace::parse_call("((T([0, 4611686018427387904], f32), T([0, 4611686018427387904], f32)), {})");
  std::mt19937_64 rng(1);
  const auto& schema = c10::Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor").schema();
  try {
    make_inputs(schema, s, rng);
    ADD_FAILURE() << "built";
  } catch (const UnsatisfiableSample& e) { EXPECT_CONTAINS(std::string(e.what()), "cannot be built"); }
}

TEST(TraceInput, LeftOutSamplesAreListedWithFileAndLine) {
  fs::path d = temp_dir("left-out");
  const fs::path trace = d / "t.txt";
  std::ofstream(trace) << "Operator: aten.add.Tensor\n"
                          "cnt: 3, ((T([2, 3], f32), T([2, 3], f32)), {})\n"
                          "cnt: 1, ((T([0, 4611686018427387904], f32), T([0, 4611686018427387904], f32)), {})\n"
                          "cnt: 1, ((T([1099511627776], f32), 1.0), {})\n"
                          "Operator: aten.relu.default\n"
                          "cnt: 1, ((T([1099511627776], f32),), {})\n";
  LeftOut left;
  auto samples = trace_path_samples(trace.string(), 8, &left);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(kg::trace::format_spec(samples[0].call), "((T([2, 3], f32), T([2, 3], f32)), {})");
  const std::string where = trace.string() + ":";
  std::map<std::string, std::string> entries(left.entries.begin(), left.entries.end());
  ASSERT_TRUE(entries.count("add.Tensor at " + where + "3")) << ::testing::PrintToString(left.entries);
  EXPECT_CONTAINS(entries["add.Tensor at " + where + "3"], "no tensor can be built for it: T([0, 4611686018427387904], f32): ");
  ASSERT_TRUE(entries.count("add.Tensor at " + where + "4"));
  EXPECT_EQ(entries["add.Tensor at " + where + "4"], "1099511627776 input elements, over the data suites' bound of 2^26 (67108864)");
  ASSERT_TRUE(entries.count("relu.default at " + where + "6"));
  EXPECT_CONTAINS(entries["relu.default"], "every call has more than 2^26 input elements (1 calls)");
  ASSERT_EQ(left.unbuildable["add.Tensor"].size(), 1u);
  EXPECT_CONTAINS(left.unbuildable["add.Tensor"][0].second, where + "3: no tensor can be built for it");
  EXPECT_TRUE(left.unbuildable["relu.default"].empty());
  fs::remove_all(d);
}

TEST(TraceInput, NonRegularOrOversizedTraceFilesAreRefused) {
  fs::path d = temp_dir("files");
  const fs::path fifo = d / "f.txt";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto done = std::async(std::launch::async, [&] { return error_of([&] { trace_path_samples(fifo.string(), 8, nullptr); }); });
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "blocked on the FIFO";
  EXPECT_CONTAINS(done.get(), "suite " + fifo.string() + ": is a FIFO");
  EXPECT_CONTAINS(error_of([&] { trace_path_samples("/dev/null", 8, nullptr); }), "is a character device");
  EXPECT_CONTAINS(error_of([&] { trace_path_samples((d / "nope.txt").string(), 8, nullptr); }), "no such trace file or directory");
  // In a directory, a FIFO named *.txt is refused on its opened descriptor, without blocking.
  fs::path dir = d / "dir";
  fs::create_directories(dir);
  std::ofstream(dir / "a.txt") << "Operator: aten.relu.default\ncnt: 1, ((T([4], f32),), {})\n";
  ASSERT_EQ(::mkfifo((dir / "b.txt").c_str(), 0600), 0);
  auto in_dir = std::async(std::launch::async, [&] { return error_of([&] { trace_path_samples(dir.string(), 8, nullptr); }); });
  ASSERT_EQ(in_dir.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "blocked on the FIFO";
  EXPECT_CONTAINS(in_dir.get(), (dir / "b.txt").string() + ": cannot read trace file: is a FIFO, not a regular file");
  fs::remove(dir / "b.txt");
  EXPECT_EQ(trace_path_samples(dir.string(), 8, nullptr).size(), 1u);  // control
  // Over the cap: refused from its size; exactly the cap is read.
  const fs::path big = d / "big.txt";
  { std::ofstream(big) << "Operator: aten.relu.default\ncnt: 1, ((T([4], f32),), {})\n"; }
  fs::resize_file(big, kMaxTraceFileBytes + 1);
  EXPECT_CONTAINS(error_of([&] { trace_path_samples(big.string(), 8, nullptr); }), "over the limit of 67108864 bytes for a trace file");
  fs::resize_file(big, kMaxTraceFileBytes);
  // NUL padding is not trace syntax, so the parser (not the size check) is what complains.
  const std::string at_cap = error_of([&] { trace_path_samples(big.string(), 8, nullptr); });
  EXPECT_EQ(at_cap.find("over the limit"), std::string::npos) << at_cap;
  EXPECT_CONTAINS(at_cap, big.string() + ":3:");
  fs::remove_all(d);
}

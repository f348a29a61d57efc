// Suite* tests: coverage of each suite, every overload resolvable (or left out with a reason),
// every sample usable for the linked libtorch's schemas, and the data suites' reading rules.
#include "kernelgate/harness.h"
#include "kernelgate/loader.h"
#include "suites.h"  // harness/src: data_suite_samples, edge builder

#include <gtest/gtest.h>

#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <set>

namespace fs = std::filesystem;
using namespace kg::harness;

namespace {

size_t overloads(const std::string& suite) { return suite_ops(suite).size(); }

}  // namespace

TEST(SuiteCoverage, EdgeHasAtLeast150Overloads) { EXPECT_GE(overloads("edge"), 150u); }
TEST(SuiteCoverage, OpinfoHasAtLeast250Overloads) { EXPECT_GE(overloads("opinfo"), 250u); }
TEST(SuiteCoverage, TracesHaveAtLeast120Overloads) { EXPECT_GE(overloads("traces"), 120u); }
TEST(SuiteCoverage, SmokeStaysSmall) {
  EXPECT_LE(overloads("smoke"), 12u);
  size_t n = 0;
  for (const auto& op : suite_ops("smoke")) n += suite_samples("smoke", op).size();
  EXPECT_LE(n, 60u);
}

TEST(SuiteCoverage, UnknownSuiteThrows) {
  EXPECT_THROW(suite_ops("no-such-suite"), std::runtime_error);
  EXPECT_EQ(suite_description("no-such-suite"), "");
}

class SuiteEach : public ::testing::TestWithParam<std::string> {};

// Every overload a suite lists resolves in the linked libtorch; the ones it leaves out say why.
TEST_P(SuiteEach, OpsResolveOrAreLeftOutWithReason) {
  const std::string suite = GetParam();
  for (const auto& op : suite_ops(suite)) {
    EXPECT_NO_THROW(kg::loader::aten_schema(op)) << suite << ": " << op;
    EXPECT_EQ(excluded_reason(op), "") << op;
    EXPECT_FALSE(suite_samples(suite, op).empty()) << op;
  }
  for (const auto& [op, why] : suite_left_out(suite)) {
    EXPECT_FALSE(why.empty()) << op;
    EXPECT_TRUE(suite_samples(suite, op).empty()) << op << " is left out but has samples";
  }
}

// Every sample makes concrete inputs for its overload's schema (the reference may still refuse a
// dtype on this device: that is a skip at evaluation time, not an unusable sample).
TEST_P(SuiteEach, EverySampleMakesInputs) {
  const std::string suite = GetParam();
  size_t n = 0, unsatisfiable = 0;
  for (const auto& op : suite_ops(suite)) {
    const auto& schema = kg::loader::aten_schema(op);
    auto samples = suite_samples(suite, op);
    for (size_t i = 0; i < samples.size(); ++i) {
      std::mt19937_64 rng(1234 + i);
      try {
        auto inputs = make_inputs(schema, samples[i], rng);
        EXPECT_EQ(inputs.size(), schema.arguments().size());
        ++n;
      } catch (const UnsatisfiableSample& e) {
        // Only derived empty samples may be unsatisfiable (indices into a leading dim of 0); the
        // evaluator skips them with the reason.
        EXPECT_NE(samples[i].label.find("leading dim 0"), std::string::npos) << suite << " " << op << " sample " << i << ": " << e.what();
        ++unsatisfiable;
      } catch (const std::exception& e) {
        ADD_FAILURE() << suite << " " << op << " sample " << i << " (" << kg::trace::format_call(samples[i].call) << "): " << e.what();
      }
    }
  }
  EXPECT_GT(n, 0u);
  EXPECT_LT(unsatisfiable * 50, n) << "unsatisfiable samples are rare exceptions";
}

INSTANTIATE_TEST_SUITE_P(Suites, SuiteEach, ::testing::Values("smoke", "edge", "opinfo", "traces"),
                         [](const auto& info) { return info.param; });

TEST(SuiteEdge, CoversEveryFamily) {
  const auto ops = suite_ops("edge");
  const std::set<std::string> have(ops.begin(), ops.end());
  for (const char* op : {"exp.default",
                         "add.Tensor",
                         "eq.Tensor",
                         "logical_and.default",
                         "sum.dim_IntList",
                         "_softmax.default",
                         "_log_softmax.default",
                         "mm.default",
                         "bmm.default",
                         "convolution.default",
                         "max_pool2d_with_indices.default",
                         "native_layer_norm.default",
                         "native_batch_norm.default",
                         "gelu.default",
                         "gather.default",
                         "scatter.src",
                         "embedding.default",
                         "cat.default",
                         "split.Tensor",
                         "view.default",
                         "where.self",
                         "clamp.default",
                         "masked_fill.Scalar",
                         "cumsum.default",
                         "sort.stable",
                         "topk.default",
                         "index.Tensor",
                         "index_put.default"})
    EXPECT_TRUE(have.count(op)) << op;
}

TEST(SuiteEdge, EachFamilyHasItsEdgeCases) {
  // Every edge overload with a tensor argument has a special-value sample, a 0-d or empty one and a
  // non-contiguous one (written by its family generator or derived from its first sample).
  size_t with_special = 0, with_empty = 0, with_layout = 0, total = 0;
  for (const auto& op : suite_ops("edge")) {
    bool special = false, empty = false, layout = false, any_tensor = false;
    for (const auto& s : suite_samples("edge", op)) {
      for (const auto& a : s.call.args) any_tensor |= a.kind == kg::trace::Value::Kind::Tensor;
      special |= s.family == ValueFamily::Special;
      empty |= s.label.find("empty") != std::string::npos || s.label.find("0-d") != std::string::npos ||
               (s.traits & static_cast<unsigned>(InputTrait::EmptyOrScalar));
      for (int64_t o : s.storage_offsets) layout |= o > 0;
      for (const auto& a : s.call.args) layout |= a.kind == kg::trace::Value::Kind::Tensor && a.tensor.has_strides;
    }
    if (!any_tensor) continue;
    if (!special || !empty || !layout)
      std::printf("  %s lacks%s%s%s\n", op.c_str(), special ? "" : " special", empty ? "" : " empty/0-d", layout ? "" : " layouts");
    ++total;
    with_special += special;
    with_empty += empty;
    with_layout += layout;
  }
  EXPECT_GE(with_special * 100, total * 95) << with_special << " of " << total;
  EXPECT_GE(with_empty * 100, total * 95) << with_empty << " of " << total;
  EXPECT_GE(with_layout * 100, total * 95) << with_layout << " of " << total;
}

TEST(SuiteEdgeLarge, SamplesAreFlaggedAndPastInt32) {
  auto ops = suite_ops("edge-large");
  ASSERT_FALSE(ops.empty());
  for (const auto& op : ops)
    for (const auto& s : suite_samples("edge-large", op)) {
      EXPECT_TRUE(s.traits & static_cast<unsigned>(InputTrait::LargeSize)) << op;
      // Past 2^31 elements in one tensor, or (cat) in the pieces together.
      int64_t biggest = 0, total = 0;
      std::function<void(const kg::trace::Value&)> walk = [&](const kg::trace::Value& v) {
        if (v.kind == kg::trace::Value::Kind::Tensor) {
          int64_t n = 1;
          for (int64_t d : v.tensor.shape) n *= d;
          biggest = std::max(biggest, n);
          total += n;
        }
        for (const auto& x : v.items) walk(x);
      };
      for (const auto& a : s.call.args) walk(a);
      EXPECT_GT(op == "cat.default" ? total : biggest, int64_t{1} << 31) << op << " " << s.label;
    }
  // None of them is in the default edge suite.
  for (const auto& op : suite_ops("edge"))
    for (const auto& s : suite_samples("edge", op)) EXPECT_FALSE(s.traits & static_cast<unsigned>(InputTrait::LargeSize)) << op;
}

TEST(SuiteData, ExcludesRandomAndUninitialisedOps) {
  for (const char* op : {"bernoulli.p", "native_dropout.default", "randn.default", "empty.memory_format", "empty_like.default",
                         "new_empty.default", "uniform_.default", "normal.Tensor_float", "randperm.default", "rrelu_with_noise.default"})
    EXPECT_NE(excluded_reason(op), "") << op;
  for (const char* op : {"add.Tensor", "embedding.default", "empty_permuted_x.default"}) EXPECT_EQ(excluded_reason(op), "") << op;
  for (const std::string suite : {"opinfo", "traces"})
    for (const auto& op : suite_ops(suite)) EXPECT_EQ(excluded_reason(op), "") << suite << " " << op;
}

// The data suites read BackendBench's format as is, merge overloads across files, and keep the
// largest counts first with distinct dtypes before distinct shapes.
TEST(SuiteData, MergesFilesAndBoundsSamplesPerOverload) {
  fs::path dir = fs::temp_directory_path() / ("kg-suite-data-" + std::to_string(::getpid()));
  fs::create_directories(dir / "traces");
  {
    std::ofstream a(dir / "traces" / "a.txt");
    a << "# a comment\nOperator: aten.add.Tensor\n"
         "cnt: 156, ((T([1, 512, 768], f16), T([1, 512, 768], f16)), {})\n"
         "cnt: 2, ((T([4, 8], f32, [1, 4]), 2), {'alpha': 0.5})\n";
    for (int i = 1; i <= 12; ++i) a << "cnt: " << i << ", ((T([" << i << ", 3], f32), T([" << i << ", 3], f32)), {})\n";
    a << "Operator: prims.convert_element_type.default\ncnt: 1, ((T([2], f32), torch.float16), {})\n";
    std::ofstream b(dir / "traces" / "b.txt");
    b << "Operator: aten.add.Tensor\ncnt: 1000, ((T([4, 8], f32, [1, 4]), 2), {'alpha': 0.5})\n"
         "Operator: aten.relu.default\ncnt: 3, ((T([2, 2], bf16),), {})\n";
  }
  setenv("KERNELGATE_DATA_DIR", dir.c_str(), 1);
  LeftOut left;
  auto samples = data_suite_samples("traces", 8, &left);
  unsetenv("KERNELGATE_DATA_DIR");
  fs::remove_all(dir);

  std::vector<Sample> add;
  for (auto& s : samples)
    if (s.op == "add.Tensor") add.push_back(s);
  ASSERT_EQ(add.size(), 8u);
  // The call in both files is merged (1002) and comes first; then the f16 one (a new dtype pair).
  EXPECT_EQ(add[0].call.count, 1002);
  EXPECT_EQ(kg::trace::format_spec(add[0].call), "((T([4, 8], f32, [1, 4]), 2), {'alpha': 0.5})");
  EXPECT_EQ(add[1].call.count, 156);
  EXPECT_EQ(add[2].call.count, 12);
  ASSERT_EQ(left.entries.size(), 1u);
  EXPECT_EQ(left.entries[0].first, "prims.convert_element_type.default");
  bool relu = false;
  for (auto& s : samples) relu |= s.op == "relu.default";
  EXPECT_TRUE(relu);
}

TEST(SuiteData, MissingDirectoryNamesTheVariable) {
  setenv("KERNELGATE_DATA_DIR", "/nonexistent-kernelgate-data", 1);
  try {
    data_suite_samples("opinfo", 8, nullptr);
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) { EXPECT_NE(std::string(e.what()).find("KERNELGATE_DATA_DIR"), std::string::npos) << e.what(); }
  unsetenv("KERNELGATE_DATA_DIR");
}

// --suite PATH: a trace file (or a directory of them) is a suite, read like `traces`.
TEST(SuiteTracePath, AFileOrADirectoryOfTracesIsASuite) {
  const fs::path dir = fs::temp_directory_path() / ("kg-suite-path-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream(dir / "mine.txt") << "Operator: aten.relu.default\n"
                                       "cnt: 3, ((T([8, 16], f32),), {})\n"
                                       "cnt: 1, ((T([4], f16),), {})\n"
                                       "Operator: aten.add.Tensor\n"
                                       "cnt: 2, ((T([2, 3], f32), T([3], f32)), {})\n";
  }
  const std::string file = (dir / "mine.txt").string();
  const auto ops = suite_ops(file);
  EXPECT_EQ(std::set<std::string>(ops.begin(), ops.end()), (std::set<std::string>{"relu.default", "add.Tensor"}));
  EXPECT_EQ(suite_samples(file, "relu.default").size(), 2u);
  EXPECT_EQ(suite_samples(dir.string() + "/", "add.Tensor").size(), 1u) << "a directory reads its *.txt files";
  EXPECT_FALSE(suite_description(file).empty());
  { std::ofstream(dir / "broken.txt") << "Operator: aten.relu.default\ncnt: 1, ((T([8, 16], f32),), {}\n"; }
  try {
    suite_ops((dir / "broken.txt").string());
    ADD_FAILURE() << "a malformed trace file must be an error";
  } catch (const std::exception& e) { EXPECT_NE(std::string(e.what()).find("broken.txt"), std::string::npos) << e.what(); }
  EXPECT_THROW(suite_ops((dir / "missing.txt").string()), std::runtime_error);
  fs::remove_all(dir);
}

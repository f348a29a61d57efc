// Launch*: the nvrtc launch table's expression parser, evaluator and TOML reader.
#include "kernelgate/launch.h"
#include "kernelgate/launch_table.h"
#include "kernelgate/loader.h"

#include <gtest/gtest.h>

using namespace kg::loader;
using namespace kg::loader::launch;
using namespace kg::protocol::launch;

namespace {

Env env() {
  Env e;
  Value t;
  t.type = Value::Type::Tensor;
  t.sizes = {4, 1000};
  t.strides = {1000, 1};
  e["self"] = t;
  e["alpha"] = Value::of_float(0.5);
  e["k"] = Value::of_int(7);
  return e;
}

int64_t ival(const std::string& s) { return eval(parse_expr(s), env()).i; }

}  // namespace

TEST(LaunchExpr, Arithmetic) {
  EXPECT_EQ(ival("1 + 2 * 3"), 7);
  EXPECT_EQ(ival("(1 + 2) * 3"), 9);
  EXPECT_EQ(ival("-7 / 2"), -3);
  EXPECT_EQ(ival("7 % 4"), 3);
  EXPECT_EQ(ival("0x10 + k"), 23);
  EXPECT_DOUBLE_EQ(eval(parse_expr("alpha * 2"), env()).f, 1.0);
}

TEST(LaunchExpr, TensorFunctionsAndSugar) {
  EXPECT_EQ(ival("numel(self)"), 4000);
  EXPECT_EQ(ival("self.numel()"), 4000);
  EXPECT_EQ(ival("ceil_div(numel(self), 256)"), 16);
  EXPECT_EQ(ival("size(self, -1)"), 1000);
  EXPECT_EQ(ival("self.size(0) * self.stride(0)"), 4000);
  EXPECT_EQ(ival("dim(self)"), 2);
  EXPECT_EQ(ival("min(k, 3) + max(k, 3)"), 10);
}

TEST(LaunchExpr, CastsCarryWidths) {
  Value v = eval(parse_expr("i32(k)"), env());
  EXPECT_EQ(v.width, 4);
  EXPECT_EQ(eval(parse_expr("f32(alpha)"), env()).width, 4);
  EXPECT_THROW(eval(parse_expr("i32(4000000000)"), env()), std::runtime_error);
  EXPECT_THROW(eval(parse_expr("u64(-1)"), env()), std::runtime_error);
}

TEST(LaunchExpr, ErrorsAreClear) {
  EXPECT_THROW(eval(parse_expr("k / 0"), env()), std::runtime_error);
  EXPECT_THROW(eval(parse_expr("nope + 1"), env()), std::runtime_error);
  EXPECT_THROW(eval(parse_expr("self + 1"), env()), std::runtime_error);
  EXPECT_THROW(eval(parse_expr("size(self, 2)"), env()), std::runtime_error);
  EXPECT_THROW(eval(parse_expr("9223372036854775807 + 1"), env()), std::runtime_error);
  try {
    parse_expr("1 + * 2", "launch.grid[0]");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.key, "launch.grid[0]");
    EXPECT_EQ(e.column, 5);
  }
  EXPECT_THROW(parse_expr("frobnicate(1)"), Error);
  EXPECT_THROW(parse_expr("size(self)"), Error);
  EXPECT_THROW(parse_expr("(((1"), Error);
  EXPECT_THROW(parse_expr(std::string(5000, '(')), Error);
  EXPECT_THROW(parse_expr("__import__('os')"), Error);
}

TEST(LaunchExpr, PrintsWhatItParsed) { EXPECT_EQ(to_string(parse_expr("1+2*x.size(0)")), "(1 + (2 * size(x, 0)))"); }

TEST(LaunchTable, ReadsAndRoundTrips) {
  const auto& schema = aten_schema("add.Tensor");
  Table t = parse_text(R"T([launch]
kernel = { float32 = "add<float>", float16 = "add_half" }
grid = ["ceil_div(numel(out0), 256)", 1]
block = 256
shared_mem = "256 * 4"
args = ["self", "other", "out0", "f32(alpha)", "numel(out0)"]
contiguous_inputs = false
)T",
                       "add__Tensor/kernelgate.toml", schema);
  ASSERT_EQ(t.launches.size(), 1u);
  EXPECT_FALSE(t.contiguous_inputs);
  EXPECT_EQ(t.launches[0].by_dtype.at("float16"), "add_half");
  EXPECT_EQ(t.launches[0].args.size(), 5u);
  Table back = from_text(to_text(t));
  EXPECT_EQ(to_text(back), to_text(t));
  EXPECT_EQ(back.kernel_names(), (std::vector<std::string>{"add<float>", "add_half"}));
}

TEST(LaunchTable, SeveralLaunchesInOrder) {
  Table t = parse_text(
      "[[launch]]\nkernel = \"a\"\ngrid = [1]\nblock = [1]\nargs = []\n"
      "[[launch]]\nkernel = \"b\"\ngrid = [1]\nblock = [1]\nargs = [\"out0\"]\n",
      "x.toml", aten_schema("relu.default"));
  ASSERT_EQ(t.launches.size(), 2u);
  EXPECT_EQ(t.launches[1].kernel, "b");
}

TEST(LaunchTable, ErrorsHaveLineColumnAndKey) {
  const auto& schema = aten_schema("relu.default");
  auto err = [&](const std::string& text) -> Error {
    try {
      parse_text(text, "relu__default/kernelgate.toml", schema);
    } catch (const Error& e) { return e; }
    ADD_FAILURE() << "no error for: " << text;
    return Error("", 0, 0, "");
  };
  Error e = err("[launch]\nkernel = \"k\"\ngrid = [1]\nblock = [1]\nargs = [\"self\", \"numel(self) +\"]\n");
  EXPECT_EQ(e.key, "launch.args[1]");
  EXPECT_EQ(e.line, 5);
  EXPECT_GT(e.column, 17);
  e = err("[launch]\nkernel = \"k\"\ngrid = [1]\nargs = []\n");
  EXPECT_EQ(e.key, "launch.block");
  e = err("[launch]\nkernel = \"k\"\ngrid = [1, 1, 1, 1]\nblock = [1]\nargs = []\n");
  EXPECT_EQ(e.key, "launch.grid");
  EXPECT_EQ(e.line, 3);
  e = err("[launch]\nkernel = \"k\"\ngrid = [\"self\"]\nblock = [1]\nargs = []\n");
  EXPECT_NE(e.message.find("is a tensor"), std::string::npos);
  e = err("[launch]\nkernel = \"k\"\ngrid = [1]\nblock = [1]\nargs = []\ntypo = 1\n");
  EXPECT_EQ(e.key, "launch.typo");
  e = err("[launch\n");
  EXPECT_EQ(e.key, "toml");
  EXPECT_EQ(e.line, 1);
  e = err("[launch]\nkernel = { float31 = \"k\" }\ngrid = [1]\nblock = [1]\nargs = []\n");
  EXPECT_EQ(e.key, "launch.kernel.float31");
  e = err("");
  EXPECT_NE(e.message.find("kernelgate.toml"), std::string::npos);
}

TEST(LaunchTable, ListArgumentsAreRejectedClearly) {
  try {
    parse_text("[launch]\nkernel = \"k\"\ngrid = [1]\nblock = [1]\nargs = [\"dim\"]\n", "x.toml", aten_schema("sum.dim_IntList"));
    FAIL();
  } catch (const Error& e) { EXPECT_NE(e.message.find("cannot be used in launch expressions"), std::string::npos) << e.message; }
}

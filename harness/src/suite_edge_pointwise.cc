// Edge generators for elementwise ops: unary math, activations, binary ops with type promotion,
// scalar overloads, comparisons and logical ops, where/clamp. Every op gets a dtype sweep, 0-d,
// empty, non-contiguous (transposed, strided, offset, expanded) and special-value samples;
// binary ops also get mixed-dtype promotion and broadcasting.
#include "suites.h"

#include <limits>

namespace kg::harness::edge {
namespace {

constexpr ValueFamily N = ValueFamily::Normal;
constexpr ValueFamily SP = ValueFamily::Special;
using L = Layout;

const char* const kUnary[] = {"abs",         "neg",         "exp",        "exp2",       "expm1",       "log",      "log2",
                              "log10",       "log1p",       "sqrt",       "rsqrt",      "sin",         "cos",      "tan",
                              "asin",        "acos",        "atan",       "sinh",       "cosh",        "tanh",     "asinh",
                              "acosh",       "atanh",       "sigmoid",    "erf",        "erfc",        "erfinv",   "floor",
                              "ceil",        "round",       "trunc",      "frac",       "sign",        "sgn",      "reciprocal",
                              "lgamma",      "digamma",     "isnan",      "isinf",      "isfinite",    "signbit",  "logical_not",
                              "bitwise_not", "nan_to_num",  "deg2rad",    "rad2deg",    "sinc",        "i0",       "square",
                              "isneginf",    "isposinf",    "logit",      "relu",       "gelu",        "silu",     "mish",
                              "hardswish",   "hardsigmoid", "hardtanh",   "elu",        "leaky_relu",  "softplus", "celu",
                              "selu",        "relu6",       "softshrink", "hardshrink", "log_sigmoid", "angle",    "log_sigmoid_forward"};
const char* const kUnaryInplace[] = {"abs_",   "neg_",        "exp_",      "log_",        "sqrt_", "sigmoid_",   "tanh_", "relu_", "floor_",
                                     "round_", "reciprocal_", "hardtanh_", "leaky_relu_", "silu_", "hardswish_", "elu_",  "sin_",  "erf_"};
const char* const kUnaryOut[] = {"abs", "exp", "sigmoid", "tanh", "log", "sqrt", "sin"};

// Same-shaped elementwise inputs in every layout and family a unary op should survive.
void unary(Builder& b, const std::string& op, bool inplace, const std::vector<std::pair<std::string, Arg>>& extra = {},
           const std::string& base = "f32") {
  const auto& dtypes = inplace ? kFloat : kAllReal;
  for (const auto& dt : dtypes) b.add(op, {tensor({33, 17}, dt)}, extra, dt);
  b.add(op, {tensor({}, base)}, extra, "0-d");
  b.add(op, {tensor({0, 5}, base)}, extra, "empty");
  b.add(op, {tensor({4, 8, 16}, base, L::Transposed)}, extra, "transposed view");
  b.add(op, {tensor({6, 10}, base, L::Strided)}, extra, "strided view (step 2)");
  b.add(op, {tensor({65}, base, L::Offset)}, extra, "offset view");
  if (!inplace) b.add(op, {tensor({5, 3, 7}, base, L::Expanded)}, extra, "expanded view (stride 0)");
  b.add(op, {tensor({257}, "f32")}, extra, "special f32", SP);
  b.add(op, {tensor({129}, "f64")}, extra, "special f64", SP);
  b.add(op, {tensor({64, 3}, "bf16")}, extra, "special bf16", SP);
  b.add(op, {tensor({64, 3}, "f16")}, extra, "special f16", SP);
  if (!inplace) b.add(op, {tensor({70000}, base)}, extra, "70000 elements (parallel path)");
}

// Binary elementwise op `op` taking (self, other[, extra...]).
void binary(Builder& b, const std::string& op, bool inplace, const std::vector<std::pair<std::string, Arg>>& extra = {},
            const std::string& base = "f32") {
  const auto& dtypes = inplace ? kFloat : kAllReal;
  for (const auto& dt : dtypes) b.add(op, {tensor({33, 17}, dt), tensor({33, 17}, dt)}, extra, dt);
  // Type promotion (the in-place ones keep self's dtype, so only wider-into-narrower is refused).
  const std::pair<const char*, const char*> promo[] = {{"f32", "f64"}, {"f16", "f32"}, {"bf16", "f16"}, {"i32", "f32"}, {"i64", "f16"},
                                                       {"u8", "i8"},   {"b8", "i32"},  {"f32", "b8"},   {"i64", "i32"}, {"f64", "i64"}};
  for (const auto& [a, c] : promo) b.add(op, {tensor({16, 9}, a), tensor({16, 9}, c)}, extra, std::string("promotion ") + a + " with " + c);
  b.add(op, {tensor({8, 8}, "f32"), tensor({}, "f64")}, extra, "0-d f64 other does not promote f32", N, kEmpty);
  b.add(op, {tensor({8, 8}, "i32"), tensor({}, "f32")}, extra, "0-d float other promotes int self", N, kEmpty);
  if (!inplace) b.add(op, {tensor({}, base), tensor({}, base)}, extra, "both 0-d");
  b.add(op, {tensor({0, 4}, base), tensor({0, 4}, base)}, extra, "empty");
  if (!inplace) {
    b.add(op, {tensor({8, 1, 32}, base), tensor({5, 32}, base)}, extra, "broadcast [8,1,32] with [5,32]", N, kBroadcast);
    b.add(op, {tensor({4, 1}, base), tensor({1, 6}, base)}, extra, "broadcast [4,1] with [1,6]", N, kBroadcast);
    b.add(op, {tensor({3, 0}, base), tensor({1}, base)}, extra, "broadcast empty", N, kBroadcast);
    b.add(op, {tensor({1}, base), tensor({7, 5}, base)}, extra, "broadcast [1] with [7,5]", N, kBroadcast);
    b.add(op, {tensor({6, 9}, base), tensor({6, 9}, base, L::Expanded)}, extra, "expanded other (stride 0)", N, kBroadcast);
  } else {
    b.add(op, {tensor({16, 32}, base), tensor({32}, base)}, extra, "broadcast other [32] into [16,32]", N, kBroadcast);
    b.add(op, {tensor({6, 9}, base), tensor({6, 9}, base, L::Expanded)}, extra, "expanded other (stride 0)", N, kBroadcast);
  }
  b.add(op, {tensor({32, 24}, base, L::Transposed), tensor({32, 24}, base)}, extra, "transposed self");
  b.add(op, {tensor({16, 20}, base), tensor({16, 20}, base, L::Strided)}, extra, "strided other");
  b.add(op, {tensor({50}, base, L::Offset), tensor({50}, base, L::Offset)}, extra, "offset views");
  b.add(op, {tensor({256}, "f32"), tensor({256}, "f32")}, extra, "special f32", SP);
  b.add(op, {tensor({128}, "f64"), tensor({128}, "f64")}, extra, "special f64", SP);
  b.add(op, {tensor({64}, "bf16"), tensor({64}, "bf16")}, extra, "special bf16", SP);
  b.add(op, {tensor({64}, "i64"), tensor({64}, "i64")}, extra, "integer extremes i64", SP);
  b.add(op, {tensor({64}, "i32"), tensor({64}, "i32")}, extra, "integer extremes i32", SP);
  if (!inplace) b.add(op, {tensor({300, 256}, base), tensor({300, 256}, base)}, extra, "300x256 (parallel path)");
}

// Tensor-with-scalar overloads (the scalar is a plain number in the call).
void with_scalar(Builder& b, const std::string& op, bool inplace, const char* scalar_arg = nullptr) {
  const auto& dtypes = inplace ? kFloat : kAllReal;
  for (const auto& dt : dtypes) b.add(op, {tensor({33, 17}, dt), I(3)}, {}, dt + " with int 3");
  for (const std::string dt : {"f32", "f64", "bf16", "i64", "i32", "u8", "b8"})
    b.add(op, {tensor({20}, dt), F(-1.5)}, {}, std::string(dt) + " with float -1.5 (promotes integers)");
  b.add(op, {tensor({20}, "f32"), F(0.0)}, {}, "with 0.0");
  b.add(op, {tensor({20}, "f32"), B(true)}, {}, "with True");
  if (!inplace) b.add(op, {tensor({}, "f32"), F(2.5)}, {}, "0-d self");
  b.add(op, {tensor({0, 3}, "f32"), I(2)}, {}, "empty");
  b.add(op, {tensor({24, 16}, "f32", L::Transposed), F(0.5)}, {}, "transposed self");
  b.add(op, {tensor({40}, "f32", L::Offset), F(0.5)}, {}, "offset self");
  b.add(op, {tensor({200}, "f32"), F(1.25)}, {}, "special f32", SP);
  b.add(op, {tensor({200}, "f32"), F(std::numeric_limits<double>::infinity())}, {}, "scalar inf");
  b.add(op, {tensor({200}, "f32"), F(std::numeric_limits<double>::quiet_NaN())}, {}, "scalar nan");
  b.add(op, {tensor({64}, "bf16"), F(-2.0)}, {}, "special bf16", SP);
  (void)scalar_arg;
}

// edge-large: just past 2^31 elements, where an int32 element index overflows. One-byte dtypes
// keep it at 2 GiB.
void large_samples(Builder& b) {
  const int64_t n = (int64_t{1} << 31) + 37;
  b.add("abs.default", {tensor({n}, "i8")}, {}, "2^31+37 elements i8", N, kLarge);
  b.add("add.Tensor", {tensor({n}, "u8"), tensor({n}, "u8")}, {}, "2^31+37 elements u8", N, kLarge);
  b.add("logical_not.default", {tensor({n}, "b8")}, {}, "2^31+37 elements b8", N, kLarge);
}

// Unary ops: plain, in place and out=.
void unary_samples(Builder& b) {
  for (const char* op : kUnary) unary(b, std::string(op) + ".default", false, {}, std::string(op) == "bitwise_not" ? "i64" : "f32");
  for (const char* op : kUnaryInplace) unary(b, std::string(op) + ".default", true);
  for (const char* op : kUnaryOut) {
    b.add(std::string(op) + ".out", {tensor({33, 17}, "f32")}, {{"out", tensor({33, 17}, "f32")}}, "out= f32");
    b.add(std::string(op) + ".out", {tensor({33, 17}, "f32", L::Transposed)}, {{"out", tensor({33, 17}, "f32")}}, "out=, transposed self");
    b.add(std::string(op) + ".out", {tensor({100}, "f32")}, {{"out", tensor({100}, "f32")}}, "out=, special", SP);
    b.add(std::string(op) + ".out", {tensor({12}, "f64")}, {{"out", tensor({12}, "f64", L::Offset)}}, "out= into an offset view");
  }
}

// Activations and other unary ops with their parameters; polygamma, glu, prelu.
void activation_samples(Builder& b) {
  unary(b, "gelu.default", false, {{"approximate", S("tanh")}});
  unary(b, "elu.default", false, {{"alpha", F(0.7)}, {"scale", F(1.5)}, {"input_scale", F(2.0)}});
  unary(b, "leaky_relu.default", false, {{"negative_slope", F(0.2)}});
  unary(b, "hardtanh.default", false, {{"min_val", F(-0.5)}, {"max_val", F(2.0)}});
  unary(b, "softplus.default", false, {{"beta", F(2.0)}, {"threshold", F(5.0)}});
  unary(b, "threshold.default", false, {{"threshold", F(0.1)}, {"value", F(-3.0)}});
  unary(b, "nan_to_num.default", false, {{"nan", F(1.0)}, {"posinf", F(100.0)}, {"neginf", F(-100.0)}});
  unary(b, "logit.default", false, {{"eps", F(1e-6)}});
  unary(b, "clamp.default", false, {{"min", F(-0.5)}, {"max", F(0.5)}});
  unary(b, "clamp.default", false, {{"min", I(-1)}});
  unary(b, "clamp_.default", true, {{"max", F(0.25)}});
  unary(b, "clamp_min.default", false, {{"min", F(0.0)}});
  unary(b, "clamp_max.default", false, {{"max", F(1.0)}});
  unary(b, "round.decimals", false, {{"decimals", I(2)}});
  unary(b, "pow.Tensor_Scalar", false, {{"exponent", F(2.0)}});
  unary(b, "pow.Tensor_Scalar", false, {{"exponent", F(0.5)}});
  unary(b, "pow.Tensor_Scalar", false, {{"exponent", I(3)}});
  for (int n : {0, 1, 3}) {
    b.add("polygamma.default", {I(n), tensor({40}, "f32")}, {}, "n=" + std::to_string(n));
    b.add("polygamma.default", {I(n), tensor({40}, "f64")}, {}, "n=" + std::to_string(n) + " special", SP);
  }
  b.add("polygamma.default", {I(2), tensor({8, 6}, "f32", L::Transposed)}, {}, "transposed");
  for (const std::string dt : {"f32", "f64"}) b.add("glu.default", {tensor({6, 20}, dt), I(-1)}, {}, std::string(dt) + " last dim");
  b.add("glu.default", {tensor({8, 6, 5}, "f32", L::Transposed), I(1)}, {}, "transposed, dim 1");
  b.add("glu.default", {tensor({4, 10}, "f32"), I(1)}, {}, "special", SP);
  b.add("glu.default", {tensor({0, 10}, "f32"), I(1)}, {}, "empty");
  for (const std::string dt : {"f32", "f64", "bf16"}) {
    b.add("prelu.default", {tensor({4, 3, 5, 5}, dt), tensor({3}, dt)}, {}, std::string(dt) + " per channel");
    b.add("_prelu_kernel.default", {tensor({4, 3, 5, 5}, dt), tensor({3, 1, 1}, dt)}, {}, std::string(dt) + " per channel", N, kBroadcast);
  }
  b.add("prelu.default", {tensor({4, 3, 5, 5}, "f32"), tensor({1}, "f32")}, {}, "one weight", SP);
  b.add("prelu.default", {tensor({6, 3}, "f32", L::Transposed), tensor({3}, "f32")}, {}, "transposed");
}

// Binary ops (tensor with tensor): plain, with alpha or rounding mode, in place and out=.
void binary_samples(Builder& b) {
  for (const char* op : {"add.Tensor",
                         "sub.Tensor",
                         "mul.Tensor",
                         "div.Tensor",
                         "remainder.Tensor",
                         "fmod.Tensor",
                         "pow.Tensor_Tensor",
                         "atan2.default",
                         "maximum.default",
                         "minimum.default",
                         "fmax.default",
                         "fmin.default",
                         "hypot.default",
                         "copysign.Tensor",
                         "logaddexp.default",
                         "logaddexp2.default",
                         "xlogy.Tensor",
                         "floor_divide.default",
                         "bitwise_and.Tensor",
                         "bitwise_or.Tensor",
                         "bitwise_xor.Tensor",
                         "bitwise_left_shift.Tensor",
                         "bitwise_right_shift.Tensor",
                         "nextafter.default",
                         "heaviside.default",
                         "gcd.default",
                         "lcm.default",
                         "rsub.Tensor",
                         "float_power.Tensor_Tensor",
                         "eq.Tensor",
                         "ne.Tensor",
                         "lt.Tensor",
                         "le.Tensor",
                         "gt.Tensor",
                         "ge.Tensor",
                         "logical_and.default",
                         "logical_or.default",
                         "logical_xor.default",
                         "special_xlog1py.default",
                         "igamma.default"}) {
    const std::string o = op;
    const bool integral = o.rfind("bitwise", 0) == 0 || o.rfind("gcd", 0) == 0 || o.rfind("lcm", 0) == 0;
    binary(b, op, false, {}, integral ? "i32" : "f32");
  }
  binary(b, "add.Tensor", false, {{"alpha", F(-0.5)}});
  binary(b, "sub.Tensor", false, {{"alpha", I(2)}});
  binary(b, "div.Tensor_mode", false, {{"rounding_mode", S("trunc")}});
  binary(b, "div.Tensor_mode", false, {{"rounding_mode", S("floor")}});
  for (const char* op : {"add_.Tensor", "sub_.Tensor", "mul_.Tensor", "div_.Tensor", "pow_.Tensor", "remainder_.Tensor"})
    binary(b, op, true);
  for (const char* op : {"add.out", "mul.out", "sub.out", "div.out", "maximum.out", "eq.Tensor_out"}) {
    const bool cmp = std::string(op).rfind("eq", 0) == 0;
    b.add(op, {tensor({16, 16}, "f32"), tensor({16, 16}, "f32")}, {{"out", tensor({16, 16}, cmp ? "b8" : "f32")}}, "out=");
    b.add(op, {tensor({8, 1}, "f32"), tensor({1, 8}, "f32")}, {{"out", tensor({8, 8}, cmp ? "b8" : "f32")}}, "out=, broadcast", N,
          kBroadcast);
    b.add(op, {tensor({64}, "f32"), tensor({64}, "f32")}, {{"out", tensor({64}, cmp ? "b8" : "f32")}}, "out=, special", SP);
    b.add(op, {tensor({10, 6}, "i32"), tensor({10, 6}, "f32", L::Transposed)}, {{"out", tensor({10, 6}, cmp ? "b8" : "f32")}},
          "out=, promotion, transposed other");
  }
}

// Tensor-with-scalar overloads, and a scalar base with a tensor exponent.
void scalar_samples(Builder& b) {
  for (const char* op : {"add.Scalar", "sub.Scalar", "mul.Scalar", "div.Scalar", "remainder.Scalar", "fmod.Scalar", "eq.Scalar",
                         "ne.Scalar", "lt.Scalar", "le.Scalar", "gt.Scalar", "ge.Scalar", "rsub.Scalar", "bitwise_and.Scalar",
                         "bitwise_or.Scalar", "xlogy.Scalar_Other", "floor_divide.Scalar", "pow.Tensor_Scalar"})
    with_scalar(b, op, false);
  for (const char* op : {"add_.Scalar", "mul_.Scalar", "div_.Scalar", "sub_.Scalar", "pow_.Scalar"}) with_scalar(b, op, true);
  for (const std::string dt : {"f32", "f64", "i64", "bf16"}) {
    b.add("pow.Scalar", {F(2.0), tensor({30}, dt)}, {}, std::string("2.0 ** ") + dt);
    b.add("pow.Scalar", {I(3), tensor({30}, dt)}, {}, std::string("3 ** ") + dt);
  }
  b.add("pow.Scalar", {F(-1.5), tensor({30}, "f32")}, {}, "(-1.5) ** special", SP);
  b.add("pow.Scalar", {F(0.5), tensor({}, "f32")}, {}, "0-d exponent");
}

// Three-operand ops: addcmul, addcdiv, lerp.
void three_operand_samples(Builder& b) {
  for (const auto& dt : kFloat) {
    b.add("addcmul.default", {tensor({12, 10}, dt), tensor({12, 10}, dt), tensor({12, 10}, dt)}, {{"value", F(0.5)}}, dt);
    b.add("addcdiv.default", {tensor({12, 10}, dt), tensor({12, 10}, dt), tensor({12, 10}, dt)}, {{"value", F(-2.0)}}, dt);
    b.add("lerp.Scalar", {tensor({12, 10}, dt), tensor({12, 10}, dt), F(0.3)}, {}, dt);
    b.add("lerp.Tensor", {tensor({12, 10}, dt), tensor({12, 10}, dt), tensor({12, 10}, dt)}, {}, dt);
  }
  for (const char* op : {"addcmul.default", "addcdiv.default", "lerp.Tensor"}) {
    b.add(op, {tensor({4, 1, 6}, "f32"), tensor({5, 1}, "f32"), tensor({6}, "f32")}, {}, "broadcast all three", N, kBroadcast);
    b.add(op, {tensor({9, 7}, "f32", L::Transposed), tensor({9, 7}, "f32", L::Strided), tensor({9, 7}, "f32", L::Offset)}, {},
          "transposed, strided and offset");
    b.add(op, {tensor({100}, "f32"), tensor({100}, "f32"), tensor({100}, "f32")}, {}, "special", SP);
    b.add(op, {tensor({}, "f32"), tensor({}, "f32"), tensor({}, "f32")}, {}, "0-d");
    b.add(op, {tensor({0, 2}, "f32"), tensor({0, 2}, "f32"), tensor({0, 2}, "f32")}, {}, "empty");
  }
  for (const char* op : {"addcmul_.default", "addcdiv_.default"}) {
    b.add(op, {tensor({12, 10}, "f32"), tensor({12, 10}, "f32"), tensor({10}, "f32")}, {{"value", F(0.1)}}, "in place, broadcast", N,
          kBroadcast);
    b.add(op, {tensor({12, 10}, "f32", L::Transposed), tensor({12, 10}, "f32"), tensor({12, 10}, "f32")}, {},
          "in place on a transposed view");
    b.add(op, {tensor({50}, "f32"), tensor({50}, "f32"), tensor({50}, "f32")}, {}, "special", SP);
  }
}

// where, and clamp with tensor bounds.
void where_clamp_samples(Builder& b) {
  for (const auto& dt : kAllReal) b.add("where.self", {tensor({20, 10}, "b8"), tensor({20, 10}, dt), tensor({20, 10}, dt)}, {}, dt);
  b.add("where.self", {tensor({20, 1}, "b8"), tensor({1, 10}, "f32"), tensor({20, 10}, "f64")}, {}, "broadcast, f32 with f64", N,
        kBroadcast);
  b.add("where.self", {tensor({}, "b8"), tensor({5}, "f32"), tensor({}, "f32")}, {}, "0-d condition and other", N, kBroadcast);
  b.add("where.self", {tensor({12, 8}, "b8", L::Transposed), tensor({12, 8}, "f32", L::Strided), tensor({12, 8}, "f32", L::Offset)}, {},
        "non-contiguous everything");
  b.add("where.self", {tensor({100}, "b8"), tensor({100}, "f32"), tensor({100}, "f32")}, {}, "special", SP);
  b.add("where.self", {tensor({0, 3}, "b8"), tensor({0, 3}, "f32"), tensor({1}, "f32")}, {}, "empty", N, kBroadcast);
  b.add("where.self", {tensor({3, 4}, "b8"), tensor({3, 4}, "i64"), tensor({3, 4}, "f16")}, {}, "i64 with f16");
  for (const char* op : {"where.ScalarOther", "where.ScalarSelf"}) {
    const bool self_scalar = std::string(op) == "where.ScalarSelf";
    for (const std::string dt : {"f32", "f64", "i64", "bf16"}) {
      if (self_scalar) b.add(op, {tensor({20, 10}, "b8"), F(0.5), tensor({20, 10}, dt)}, {}, dt);
      else b.add(op, {tensor({20, 10}, "b8"), tensor({20, 10}, dt), F(0.5)}, {}, dt);
    }
  }
  for (const auto& dt : kFloat)
    b.add("clamp.Tensor", {tensor({16, 8}, dt), tensor({16, 8}, dt), tensor({16, 8}, dt)}, {}, dt + " (min may exceed max)");
  b.add("clamp.Tensor", {tensor({16, 8}, "f32"), tensor({8}, "f32"), None()}, {}, "min only, broadcast", N, kBroadcast);
  b.add("clamp.Tensor", {tensor({16, 8}, "f32"), None(), tensor({16, 1}, "f32")}, {}, "max only, broadcast", N, kBroadcast);
  b.add("clamp.Tensor", {tensor({100}, "f32"), tensor({100}, "f32"), tensor({100}, "f32")}, {}, "special", SP);
  b.add("clamp.Tensor", {tensor({10, 6}, "i64"), tensor({10, 6}, "i64", L::Transposed), tensor({6}, "i64")}, {}, "i64, transposed min", N,
        kBroadcast);
  b.add("clamp_min.Tensor", {tensor({16, 8}, "f32"), tensor({8}, "f32")}, {}, "broadcast", N, kBroadcast);
  b.add("clamp_min.Tensor", {tensor({64}, "f32"), tensor({64}, "f32")}, {}, "special", SP);
  b.add("clamp_max.Tensor", {tensor({16, 8}, "f32"), tensor({16, 8}, "f32", L::Transposed)}, {}, "transposed max");
  b.add("clamp_max.Tensor", {tensor({64}, "f32"), tensor({64}, "f32")}, {}, "special", SP);
}

}  // namespace

void pointwise_samples(Builder& b, bool large) {
  if (large) {
    large_samples(b);
    return;
  }
  unary_samples(b);
  activation_samples(b);
  binary_samples(b);
  scalar_samples(b);
  three_operand_samples(b);
  where_clamp_samples(b);
}

}  // namespace kg::harness::edge

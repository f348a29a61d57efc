// Unit tests for the trace-format parser and formatter (harness/src/trace_parser.cc, trace_format.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernelgate/trace.h"

namespace kg::trace {
namespace {

using K = Value::Kind;

Value one_arg(const std::string& text) {
  Call c = parse_call("((" + text + ",), {})");
  EXPECT_EQ(c.args.size(), 1u) << text;
  return c.args.empty() ? Value{} : c.args[0];
}

// Expects `f` to throw a ParseError at line:col whose message contains every piece of `parts`.
template <typename F>
void expect_error(F&& f, int line, int col, std::vector<std::string> parts, const char* source = nullptr) {
  try {
    f();
    ADD_FAILURE() << "no ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line, line) << e.what();
    EXPECT_EQ(e.column, col) << e.what();
    std::string prefix = ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
    EXPECT_NE(std::string(e.what()).find(prefix), std::string::npos) << e.what();
    if (source) { EXPECT_EQ(std::string(e.what()).rfind(std::string(source) + ":", 0), 0u) << e.what(); }
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << "missing '" << p << "' in: " << e.what();
  }
}

void expect_trace_error(const std::string& text, int line, int col, std::vector<std::string> parts) {
  expect_error([&] { parse_trace(text, "t.txt"); }, line, col, std::move(parts), "t.txt");
}
void expect_call_error(const std::string& text, int line, int col, std::vector<std::string> parts) {
  expect_error([&] { parse_call(text, "spec"); }, line, col, std::move(parts), "spec");
}

// ---------------------------------------------------------------------------------------------
// Files

TEST(TraceParser, RealTraceExample) {
  const std::string text =
      "Operator: aten.add.Tensor\n"
      "cnt: 156, ((T([1, 512, 768], f16), T([1, 512, 768], f16)), {})\n"
      "cnt: 2, ((T([4, 8], f32, [1, 4]), 2), {'alpha': 0.5})\n"
      "\n"
      "# a comment\n"
      "Operator: aten._to_copy.default\n"
      "    cnt: 3, ((T([8, 3, 224, 224], f16),), {'dtype': torch.float32})\n";
  auto ops = parse_trace(text, "hf.txt");
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "aten.add.Tensor");
  EXPECT_EQ(ops[0].line, 1);
  ASSERT_EQ(ops[0].calls.size(), 2u);
  const Call& c0 = ops[0].calls[0];
  EXPECT_EQ(c0.count, 156);
  EXPECT_EQ(c0.line, 2);
  ASSERT_EQ(c0.args.size(), 2u);
  EXPECT_TRUE(c0.kwargs.empty());
  for (const auto& a : c0.args) {
    ASSERT_EQ(a.kind, K::Tensor);
    EXPECT_EQ(a.tensor.shape, (std::vector<int64_t>{1, 512, 768}));
    EXPECT_EQ(a.tensor.dtype, "f16");
    EXPECT_FALSE(a.tensor.has_strides);
  }
  const Call& c1 = ops[0].calls[1];
  EXPECT_EQ(c1.count, 2);
  EXPECT_EQ(c1.line, 3);
  EXPECT_TRUE(c1.args[0].tensor.has_strides);
  EXPECT_EQ(c1.args[0].tensor.strides, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(c1.args[1].kind, K::Int);
  EXPECT_EQ(c1.args[1].i, 2);
  ASSERT_EQ(c1.kwargs.size(), 1u);
  EXPECT_EQ(c1.kwargs[0].first, "alpha");
  EXPECT_EQ(c1.kwargs[0].second.kind, K::Float);
  EXPECT_EQ(c1.kwargs[0].second.f, 0.5);

  EXPECT_EQ(ops[1].name, "aten._to_copy.default");
  EXPECT_EQ(ops[1].line, 6);
  ASSERT_EQ(ops[1].calls.size(), 1u);
  EXPECT_EQ(ops[1].calls[0].line, 7);
  EXPECT_EQ(ops[1].calls[0].count, 3);
  ASSERT_EQ(ops[1].calls[0].kwargs.size(), 1u);
  EXPECT_EQ(ops[1].calls[0].kwargs[0].first, "dtype");
  EXPECT_EQ(ops[1].calls[0].kwargs[0].second.kind, K::Dtype);
  EXPECT_EQ(ops[1].calls[0].kwargs[0].second.s, "torch.float32");
}

// Lines as BackendBench's dispatch recorder writes them (dtype kwargs as bare abbreviations,
// devices as 'cuda' strings, strides as a `stride=` tuple).
TEST(TraceParser, BackendBenchRecorderLines) {
  const std::string text =
      "Operator: aten.new_empty_strided.default\n"
      "cnt: 4, ((T([64, 128], f16, stride=(1, 64)), [64, 128], [128, 1]), {'dtype': f16, 'layout': "
      "torch.strided, 'device': 'cuda', 'pin_memory': False})\n"
      "Operator: aten.sum.SymInt\n"
      "cnt: 1, ((T([8, 128], f16), [0], True), {})\n";
  auto ops = parse_trace(text);
  ASSERT_EQ(ops.size(), 2u);
  const Call& c = ops[0].calls[0];
  EXPECT_EQ(c.args[0].tensor.strides, (std::vector<int64_t>{1, 64}));
  EXPECT_TRUE(c.args[0].tensor.has_strides);
  ASSERT_EQ(c.kwargs.size(), 4u);
  EXPECT_EQ(c.kwargs[0].second.kind, K::Dtype);
  EXPECT_EQ(c.kwargs[0].second.s, "torch.float16");
  EXPECT_EQ(c.kwargs[1].second.kind, K::Symbol);
  EXPECT_EQ(c.kwargs[1].second.s, "torch.strided");
  EXPECT_EQ(c.kwargs[2].second.kind, K::String);
  EXPECT_EQ(c.kwargs[2].second.s, "cuda");
  EXPECT_EQ(c.kwargs[3].second.kind, K::Bool);
  EXPECT_FALSE(c.kwargs[3].second.b);
  EXPECT_EQ(ops[1].name, "aten.sum.SymInt");
}

TEST(TraceParser, CrlfBlankAndCommentLines) {
  auto ops = parse_trace(
      "\r\n# header\r\nOperator: aten.relu.default \r\n\t\r\n  # indented comment\r\n"
      "\tcnt: 1, ((T([2], f32),), {})\r\n");
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].name, "aten.relu.default");
  EXPECT_EQ(ops[0].line, 3);
  ASSERT_EQ(ops[0].calls.size(), 1u);
  EXPECT_EQ(ops[0].calls[0].line, 6);
}

TEST(TraceParser, EmptyAndOperatorWithoutCalls) {
  EXPECT_TRUE(parse_trace("").empty());
  EXPECT_TRUE(parse_trace("\n\n# nothing\n").empty());
  auto ops = parse_trace("Operator: aten.a.default\nOperator: aten.b.default");
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_TRUE(ops[0].calls.empty());
  EXPECT_EQ(ops[1].name, "aten.b.default");
}

TEST(TraceParser, ParseCallWithAndWithoutCount) {
  Call a = parse_call("((T([2, 2], f32),), {})");
  EXPECT_EQ(a.count, 1);
  Call b = parse_call("  cnt: 42, ((T([2, 2], f32),), {})  ");
  EXPECT_EQ(b.count, 42);
  EXPECT_TRUE(same_value(a.args[0], b.args[0]));
  Call c = parse_call("cnt: 0, ((), {})");
  EXPECT_EQ(c.count, 0);
  // A spec may span lines when given to parse_call directly.
  Call d = parse_call("(\n  (1,\n   2),\n  {'a': 3}\n)");
  EXPECT_EQ(d.args.size(), 2u);
  EXPECT_EQ(d.kwargs.size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Values

TEST(TraceValues, Scalars) {
  EXPECT_EQ(one_arg("None").kind, K::None);
  Value t = one_arg("True");
  EXPECT_EQ(t.kind, K::Bool);
  EXPECT_TRUE(t.b);
  EXPECT_FALSE(one_arg("False").b);

  EXPECT_EQ(one_arg("0").i, 0);
  EXPECT_EQ(one_arg("-7").i, -7);
  EXPECT_EQ(one_arg("+7").i, 7);
  EXPECT_EQ(one_arg("- 7").i, -7);
  EXPECT_EQ(one_arg("9223372036854775807").i, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(one_arg("-9223372036854775808").i, std::numeric_limits<int64_t>::min());

  EXPECT_EQ(one_arg("1.0").kind, K::Float);
  EXPECT_EQ(one_arg("1.0").f, 1.0);
  EXPECT_EQ(one_arg("-2.5e-3").f, -2.5e-3);
  EXPECT_EQ(one_arg("1e10").f, 1e10);
  EXPECT_EQ(one_arg("1E+10").f, 1e10);
  EXPECT_EQ(one_arg(".5").f, 0.5);
  EXPECT_EQ(one_arg("5.").f, 5.0);
  EXPECT_EQ(one_arg("1e400").f, std::numeric_limits<double>::infinity());
  EXPECT_EQ(one_arg("1e-400").f, 0.0);
  EXPECT_EQ(one_arg("0.1").f, 0.1);
  Value nz = one_arg("-0.0");
  EXPECT_EQ(nz.kind, K::Float);
  EXPECT_TRUE(std::signbit(nz.f));
  EXPECT_EQ(one_arg("inf").f, std::numeric_limits<double>::infinity());
  EXPECT_EQ(one_arg("-inf").f, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(one_arg("math.inf").f, std::numeric_limits<double>::infinity());
  EXPECT_EQ(one_arg("inf").kind, K::Float);
  EXPECT_TRUE(std::isnan(one_arg("nan").f));
  EXPECT_EQ(one_arg("nan").kind, K::Float);
}

TEST(TraceValues, Strings) {
  EXPECT_EQ(one_arg("'hello'").s, "hello");
  EXPECT_EQ(one_arg("'hello'").kind, K::String);
  EXPECT_EQ(one_arg("\"dq\"").s, "dq");
  EXPECT_EQ(one_arg("''").s, "");
  EXPECT_EQ(one_arg(R"('it\'s')").s, "it's");
  EXPECT_EQ(one_arg(R"("say \"hi\"")").s, "say \"hi\"");
  EXPECT_EQ(one_arg(R"('a"b')").s, "a\"b");
  EXPECT_EQ(one_arg(R"('\\ \n\t\r\a\b\f\v')").s, "\\ \n\t\r\a\b\f\v");
  EXPECT_EQ(one_arg(R"('\x41\101\0')").s, std::string("AA\0", 3));
  EXPECT_EQ(one_arg(R"('\u00e9\U0001F600')").s, "\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(one_arg(R"('\xe9')").s, "\xC3\xA9");
  EXPECT_EQ(one_arg(R"('\d')").s, "\\d");  // Python keeps unknown escapes
  EXPECT_EQ(one_arg("'caf\xC3\xA9'").s, "caf\xC3\xA9");
}

TEST(TraceValues, Tensors) {
  Value a = one_arg("T([2, 3], f32)");
  ASSERT_EQ(a.kind, K::Tensor);
  EXPECT_EQ(a.tensor.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.tensor.dtype, "f32");
  EXPECT_FALSE(a.tensor.has_strides);
  EXPECT_TRUE(a.tensor.strides.empty());

  Value b = one_arg("T([2, 3], f32, [1, 2])");
  EXPECT_TRUE(b.tensor.has_strides);
  EXPECT_EQ(b.tensor.strides, (std::vector<int64_t>{1, 2}));

  Value c = one_arg("T([2, 3], bf16, stride=(1, 2))");
  EXPECT_EQ(c.tensor.dtype, "bf16");
  EXPECT_EQ(c.tensor.strides, (std::vector<int64_t>{1, 2}));

  Value d = one_arg("T([], b8)");  // 0-d
  EXPECT_TRUE(d.tensor.shape.empty());
  EXPECT_EQ(d.tensor.dtype, "b8");

  EXPECT_EQ(one_arg("T([0, 5], i64)").tensor.shape, (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(one_arg("T([4], f8e4m3fn)").tensor.dtype, "f8e4m3fn");  // any identifier is kept
  EXPECT_EQ(one_arg("T([4], c128,)").tensor.dtype, "c128");
  EXPECT_EQ(one_arg("T([4], 'f16')").tensor.dtype, "f16");
  EXPECT_EQ(one_arg("T([4], torch.float16)").tensor.dtype, "f16");
  EXPECT_EQ(one_arg("T([4], th.int64)").tensor.dtype, "i64");
  EXPECT_EQ(one_arg("T([4], torch.float8_e5m2)").tensor.dtype, "torch.float8_e5m2");
  EXPECT_FALSE(one_arg("T([4], f16, None)").tensor.has_strides);
  EXPECT_FALSE(one_arg("T([4], f16, stride=None)").tensor.has_strides);
  EXPECT_EQ(one_arg("T([3, 4], u8, [-4, 1])").tensor.strides, (std::vector<int64_t>{-4, 1}));
  EXPECT_EQ(one_arg("T((2, 3), f32)").tensor.shape, (std::vector<int64_t>{2, 3}));
}

TEST(TraceValues, Containers) {
  Value l = one_arg("[1, 2.5, 'x']");
  ASSERT_EQ(l.kind, K::List);
  ASSERT_EQ(l.items.size(), 3u);
  EXPECT_EQ(l.items[0].kind, K::Int);
  EXPECT_EQ(l.items[1].kind, K::Float);
  EXPECT_EQ(l.items[2].kind, K::String);
  EXPECT_EQ(one_arg("[]").items.size(), 0u);
  EXPECT_EQ(one_arg("[1, 2,]").items.size(), 2u);

  Value t0 = one_arg("()");
  EXPECT_EQ(t0.kind, K::Tuple);
  EXPECT_TRUE(t0.items.empty());
  Value t1 = one_arg("(5,)");
  EXPECT_EQ(t1.kind, K::Tuple);
  ASSERT_EQ(t1.items.size(), 1u);
  EXPECT_EQ(t1.items[0].i, 5);
  Value t2 = one_arg("(5, 6)");
  EXPECT_EQ(t2.kind, K::Tuple);
  EXPECT_EQ(t2.items.size(), 2u);
  EXPECT_EQ(one_arg("(5, 6,)").items.size(), 2u);
  Value paren = one_arg("(5)");  // as in Python, (x) is just x
  EXPECT_EQ(paren.kind, K::Int);

  Value d = one_arg("{'a': 1, \"b\": [None], 'c': {'d': ()},}");
  ASSERT_EQ(d.kind, K::Dict);
  EXPECT_EQ(d.keys, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(d.items.size(), 3u);
  EXPECT_EQ(d.items[1].items[0].kind, K::None);
  EXPECT_EQ(d.items[2].kind, K::Dict);
  EXPECT_EQ(one_arg("{}").kind, K::Dict);
}

TEST(TraceValues, Nesting) {
  Value v = one_arg("[[T([2], f16), (1, [2, (3,)])], {'k': [[[]]]}]");
  ASSERT_EQ(v.kind, K::List);
  EXPECT_EQ(v.items[0].items[0].kind, K::Tensor);
  EXPECT_EQ(v.items[0].items[1].items[1].items[1].kind, K::Tuple);
  EXPECT_EQ(v.items[0].items[1].items[1].items[1].items[0].i, 3);
  EXPECT_EQ(v.items[1].items[0].items[0].items[0].kind, K::List);
  // A list of tensors as an argument (cat, stack, ...).
  Call c = parse_call("(([T([2, 3], f16), T([2, 3], f16)], 1), {})");
  ASSERT_EQ(c.args[0].kind, K::List);
  EXPECT_EQ(c.args[0].items.size(), 2u);
  // Nesting exactly at the limit parses.
  std::string deep = std::string(kMaxNestingDepth - 2, '[') + std::string(kMaxNestingDepth - 2, ']');
  EXPECT_NO_THROW(parse_call("((" + deep + ",), {})"));
}

TEST(TraceValues, DtypesDevicesSymbols) {
  Value a = one_arg("torch.float16");
  EXPECT_EQ(a.kind, K::Dtype);
  EXPECT_EQ(a.s, "torch.float16");
  EXPECT_EQ(one_arg("torch.bool").s, "torch.bool");
  EXPECT_EQ(one_arg("torch.bool").kind, K::Dtype);
  EXPECT_EQ(one_arg("th.bfloat16").s, "torch.bfloat16");
  Value abbr = one_arg("f16");  // BackendBench binds the abbreviations as names
  EXPECT_EQ(abbr.kind, K::Dtype);
  EXPECT_EQ(abbr.s, "torch.float16");
  EXPECT_EQ(one_arg("b8").s, "torch.bool");

  Value d0 = one_arg("device(type='cuda', index=0)");
  EXPECT_EQ(d0.kind, K::Device);
  EXPECT_EQ(d0.s, "cuda:0");
  EXPECT_EQ(one_arg("device(type='cpu')").s, "cpu");
  EXPECT_EQ(one_arg("torch.device('cpu')").s, "cpu");
  EXPECT_EQ(one_arg("torch.device(\"cuda:1\")").s, "cuda:1");
  EXPECT_EQ(one_arg("torch.device('cuda', 3)").s, "cuda:3");
  EXPECT_EQ(one_arg("torch.device('cuda', index=None)").s, "cuda");
  Value str = one_arg("'cuda'");  // a plain string stays a string
  EXPECT_EQ(str.kind, K::String);

  Value m = one_arg("torch.contiguous_format");
  EXPECT_EQ(m.kind, K::Symbol);
  EXPECT_EQ(m.s, "torch.contiguous_format");
  EXPECT_EQ(one_arg("torch.channels_last").s, "torch.channels_last");
  EXPECT_EQ(one_arg("torch.strided").kind, K::Symbol);
  EXPECT_EQ(one_arg("torch.strided").s, "torch.strided");
  EXPECT_EQ(one_arg("th.preserve_format").s, "torch.preserve_format");
  Value other = one_arg("some_name");
  EXPECT_EQ(other.kind, K::Symbol);
  EXPECT_EQ(other.s, "some_name");
}

TEST(TraceValues, KwargsKeepOrder) {
  Call c = parse_call("((T([3], f32),), {'dim': -1, 'keepdim': True, \"dtype\": None, 'alpha': -2.5e-3,})");
  ASSERT_EQ(c.kwargs.size(), 4u);
  EXPECT_EQ(c.kwargs[0].first, "dim");
  EXPECT_EQ(c.kwargs[0].second.i, -1);
  EXPECT_EQ(c.kwargs[1].first, "keepdim");
  EXPECT_EQ(c.kwargs[2].first, "dtype");
  EXPECT_EQ(c.kwargs[2].second.kind, K::None);
  EXPECT_EQ(c.kwargs[3].second.f, -2.5e-3);
  EXPECT_NO_THROW(parse_call("((), {},)"));
  EXPECT_NO_THROW(parse_call("([1], {})"));  // a list of positional arguments is accepted too
}

// ---------------------------------------------------------------------------------------------
// Errors: every one names SOURCE:LINE:COL, what was expected and what was found.

TEST(TraceErrors, UnterminatedList) {
  //                         col: 12345678901234567890123456789012
  expect_trace_error("Operator: x\ncnt: 1, ((T([2, 3], f32), [1, 2), {})", 2, 32, {"t.txt:2:32:", "expected ',' or ']'", "found ')'"});
  expect_call_error("(([1, 2", 1, 8, {"expected ',' or ']'", "found end of input"});
  expect_trace_error("Operator: x\ncnt: 1, (([1, 2", 2, 16, {"found end of line"});
}

TEST(TraceErrors, BadDtypeSyntax) {
  //                 123456789012345
  expect_call_error("((T([2, 3], 3),), {})", 1, 13, {"expected a dtype name", "found number '3'"});
  expect_call_error("((T([2, 3]),), {})", 1, 11, {"expected ',' after the tensor shape", "found ')'"});
  expect_call_error("((T(f32, [2]),), {})", 1, 5, {"expected '[' starting the tensor shape", "found name 'f32'"});
  expect_call_error("((T([2], 'f 16'),), {})", 1, 10, {"expected a dtype name", "'f 16'"});
  expect_call_error("((T([2], f16, [1, 2]),), {})", 1, 3, {"1 dimensions but 2 strides"});
  expect_call_error("((T([2, -1], f16),), {})", 1, 9, {"negative size -1"});
  expect_call_error("((T([2], f16, foo),), {})", 1, 15, {"expected strides", "found name 'foo'"});
  expect_call_error("((T([2], f16, [1], [1]),), {})", 1, 20, {"expected ')' closing T(...)"});
}

TEST(TraceErrors, JunkAfterCall) {
  //                                  1234567890123456789
  expect_trace_error("Operator: x\ncnt: 1, ((), {}) junk", 2, 18, {"expected end of line after the call spec", "found name 'junk'"});
  expect_call_error("((), {}))", 1, 9, {"expected end of", "found ')'"});
  expect_call_error("((), {}, 3)", 1, 10, {"expected ')' closing the call spec", "found number '3'"});
}

TEST(TraceErrors, MissingOperatorLine) {
  expect_trace_error("# leading comment\n\ncnt: 1, ((), {})\n", 3, 1, {"call line before any 'Operator:' line"});
  expect_trace_error("Operator: x\nwhatever 12\n", 2, 1, {"expected an 'Operator:' line, a 'cnt:' line", "found 'whatever 12'"});
  expect_trace_error("Operator: \n", 1, 11, {"expected an operator name", "found end of line"});
  expect_trace_error("Operator: aten.add Tensor\n", 1, 19, {"expected an operator name", "found ' '"});
}

TEST(TraceErrors, IntegerOverflow) {
  //                 1234567
  expect_call_error("((1, 9223372036854775808), {})", 1, 6, {"integer 9223372036854775808 out of int64 range"});
  expect_call_error("((1, -9223372036854775809), {})", 1, 6, {"-9223372036854775809 out of int64 range"});
  expect_call_error("((99999999999999999999999999,), {})", 1, 3, {"out of int64 range"});
  expect_call_error("((T([99999999999999999999], f16),), {})", 1, 6, {"out of int64 range"});
  expect_trace_error("Operator: x\ncnt: 18446744073709551616, ((), {})", 2, 6, {"out of int64 range"});
}

TEST(TraceErrors, DepthBomb) {
  // Spec '(' is column 1, the args tuple column 2 (depth 2); '[' number k sits at column k + 2
  // with depth k + 2, so the first one past the limit is at column kMaxNestingDepth + 1.
  std::string bomb = "((" + std::string(200, '[');
  expect_call_error(bomb, 1, kMaxNestingDepth + 1, {"nesting deeper than 64 levels"});
  // Far deeper input never reaches the stack limit: parsing stops at the limit.
  std::string huge = "((" + std::string(1 << 20, '(') + std::string(1 << 20, ')') + ",), {})";
  expect_call_error(huge, 1, kMaxNestingDepth + 1, {"nesting deeper"});
  std::string tensors;
  for (int i = 0; i < 100; ++i) tensors += "[";
  expect_trace_error("Operator: x\ncnt: 1, ((" + tensors, 2, 9 + kMaxNestingDepth, {"nesting deeper"});
}

TEST(TraceErrors, CountAndCallShape) {
  expect_trace_error("Operator: x\ncnt: -1, ((), {})", 2, 6, {"expected a non-negative integer count after 'cnt:'", "found '-'"});
  expect_trace_error("Operator: x\ncnt: 1.5, ((), {})", 2, 6, {"non-negative integer count", "found number '1.5'"});
  expect_trace_error("Operator: x\ncnt: ((), {})", 2, 6, {"non-negative integer count", "found '('"});
  expect_trace_error("Operator: x\ncnt: 3 ((), {})", 2, 8, {"expected ',' after the count", "found '('"});
  expect_call_error("(T([1], f16), {})", 1, 2, {"expected a tuple of positional arguments", "found a tensor"});
  expect_call_error("((), [])", 1, 6, {"expected '{' starting the keyword arguments", "found '['"});
  expect_call_error("((),)", 1, 5, {"expected '{' starting the keyword arguments", "found ')'"});
  expect_call_error("", 1, 1, {"expected '(' starting the call spec", "found end of input"});
  expect_call_error("((), {1: 2})", 1, 7, {"expected a string key or '}'", "found number '1'"});
  expect_call_error("((), {'a': 1, 'a': 2})", 1, 15, {"duplicate key 'a'"});
  expect_call_error("((), {'a' 1})", 1, 11, {"expected ':' after dict key", "found number '1'"});
}

TEST(TraceErrors, Lexical) {
  expect_call_error("(('abc), {})", 1, 3, {"unterminated string", "found end of input"});
  expect_trace_error("Operator: x\ncnt: 1, (('abc\n", 2, 11, {"unterminated string", "found end of line"});
  expect_call_error("((1 @ 2), {})", 1, 5, {"unexpected character '@'"});
  expect_call_error("((12abc,), {})", 1, 5, {"expected a delimiter after number '12'", "found 'a'"});
  expect_call_error("((1e,), {})", 1, 5, {"expected exponent digits", "found ','"});
  expect_call_error("((007,), {})", 1, 3, {"leading zeros"});
  expect_call_error("(('\\x4',), {})", 1, 7, {"expected 2 hex digits after \\x", "found '''"});
  expect_call_error("(('\\ud800',), {})", 1, 4, {"not a valid code point"});
  expect_call_error("((foo(1),), {})", 1, 3, {"unknown call 'foo'", "expected T(...)"});
  expect_call_error("((ST([2], f32),), {})", 1, 3, {"sparse tensors"});
  expect_call_error("((-'a',), {})", 1, 4, {"expected a number after '-'", "found string 'a'"});
  expect_call_error("((device(1),), {})", 1, 10, {"expected a device type string", "found number '1'"});
  expect_call_error("((device('cuda:x'),), {})", 1, 10, {"bad device index"});
  expect_call_error("((,), {})", 1, 3, {"expected a value", "found ','"});
  expect_call_error(std::string("((\x01,), {})", 10), 1, 3, {"unexpected byte 0x01"});
}

TEST(TraceErrors, ErrorOnLaterLineOfMultiLineSpec) {
  expect_call_error("(\n  (1,\n   2 3),\n  {})", 3, 6, {"expected ',' or ')'", "found number '3'"});
}

TEST(TraceErrors, WhatFormat) {
  try {
    parse_trace("Operator: x\ncnt: 1, ((), {}) junk\n", "data/traces/hf.txt");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "data/traces/hf.txt:2:18: expected end of line after the call spec, found name 'junk'");
    EXPECT_EQ(e.source, "data/traces/hf.txt");
  }
}

TEST(TraceErrors, Limits) {
  std::string many = "(([";
  many.reserve(2 * kMaxValuesPerCall + 16);
  for (std::size_t i = 0; i < kMaxValuesPerCall; ++i) many += "0,";
  many += "],), {})";
  expect_error([&] { parse_call(many); }, 1, 2 * static_cast<int>(kMaxValuesPerCall) - 2, {"too many values in one call"});
  std::string big(kMaxInputBytes + 1, ' ');
  expect_error([&] { parse_trace(big); }, 1, 1, {"exceeds the limit"});
}

// ---------------------------------------------------------------------------------------------
// Formatting and round trips

TEST(TraceFormat, Canonical) {
  EXPECT_EQ(format_value(one_arg("T([2, 3], f32)")), "T([2, 3], f32)");
  EXPECT_EQ(format_value(one_arg("T([2,3],f32,stride=(1,2))")), "T([2, 3], f32, [1, 2])");
  EXPECT_EQ(format_value(one_arg("T([], f16, None)")), "T([], f16)");
  EXPECT_EQ(format_value(one_arg("1.0")), "1.0");
  EXPECT_EQ(format_value(one_arg("0.1")), "0.1");
  EXPECT_EQ(format_value(one_arg("-0.0")), "-0.0");
  EXPECT_EQ(format_value(one_arg("1e300")), "1e+300");
  EXPECT_EQ(format_value(one_arg("-inf")), "-inf");
  EXPECT_EQ(format_value(one_arg("nan")), "nan");
  EXPECT_EQ(format_value(one_arg("(1)")), "1");
  EXPECT_EQ(format_value(one_arg("(1,)")), "(1,)");
  EXPECT_EQ(format_value(one_arg("( )")), "()");
  EXPECT_EQ(format_value(one_arg("\"it's\"")), "'it\\'s'");
  EXPECT_EQ(format_value(one_arg("'\\x01\\n'")), "'\\x01\\n'");
  EXPECT_EQ(format_value(one_arg("device(type='cuda', index=0)")), "torch.device('cuda:0')");
  EXPECT_EQ(format_value(one_arg("f16")), "torch.float16");
  EXPECT_EQ(format_value(one_arg("{'a' : [1,2 ,],}")), "{'a': [1, 2]}");
  EXPECT_EQ(format_call(parse_call("cnt: 156, ((T([1, 512, 768], f16), T([1, 512, 768], f16)), {})")),
            "cnt: 156, ((T([1, 512, 768], f16), T([1, 512, 768], f16)), {})");
  EXPECT_EQ(format_call(parse_call("((T([8, 3, 224, 224], f16),), {'dtype': torch.float32})")),
            "cnt: 1, ((T([8, 3, 224, 224], f16),), {'dtype': torch.float32})");
  EXPECT_EQ(format_spec(parse_call("((), {})")), "((), {})");
  EXPECT_EQ(format_trace(parse_trace("# c\nOperator: aten.x.y\n  cnt: 2, ((1,), {})\n")), "Operator: aten.x.y\ncnt: 2, ((1,), {})\n");
}

void expect_round_trip(const std::string& spec) {
  SCOPED_TRACE(spec);
  Call a = parse_call(spec);
  std::string text = format_call(a);
  Call b = parse_call(text);
  EXPECT_TRUE(same_call(a, b)) << text << "\n" << format_call(b);
  EXPECT_EQ(format_call(b), text);
}

TEST(TraceFormat, RoundTripExamples) {
  const char* specs[] = {
      "((T([1, 512, 768], f16), T([1, 512, 768], f16)), {})",
      "cnt: 3, ((T([8, 3, 224, 224], f16),), {'dtype': torch.float32})",
      "((T([4, 8], f32, [1, 4]), 2), {'alpha': 0.5})",
      ("((T([64, 128], f16, stride=(1, 64)), [64, 128], [128, 1]), {'dtype': f16, 'layout': torch.strided, "
       "'device': 'cuda', 'pin_memory': False})"),
      "((1, -2.5e-3, 1e10, inf, -inf, nan, -0.0, 0.1, 1e-320, 1.7976931348623157e308, 5e-324), {})",
      "((9223372036854775807, -9223372036854775808, 0, -1), {})",
      "(('', 'a\\'b\"c', \"\\\\\", '\\x00\\x1f\\x7f', '\\u00e9', 'caf\xC3\xA9', '\\t\\r\\n'), {})",
      "(([], (), (1,), [[1, 2], (3,)], {'k': {'j': [None]}}, {}), {})",
      "((torch.device('cpu'), device(type='cuda', index=0), torch.device('cuda', 7)), {})",
      "((torch.contiguous_format, torch.channels_last, torch.strided, th.float16, torch.bool, some.dotted_name), {})",
      "((T([], b8), T([0, 3], bf16), T([2], f8e4m3fn), T([2, 2], torch.float8_e5m2, [1, 2]), T([3], 'i32')), {})",
      "(([T([2, 3], f16), T([2, 3], f16)], 1), {'out': None, 'alpha': True})",
  };
  for (const char* s : specs) expect_round_trip(s);
}

// Random values: format then parse gives back the same value.
class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}
  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }
  Value value(int depth) {
    Value v;
    int k = pick(depth > 4 ? 9 : 12);
    switch (k) {
      case 0: break;
      case 1:
        v.kind = K::Bool;
        v.b = pick(2);
        break;
      case 2: {
        v.kind = K::Int;
        uint64_t bits = rng_();
        std::memcpy(&v.i, &bits, sizeof bits);
        if (pick(2)) v.i >>= pick(63);
        break;
      }
      case 3: {
        v.kind = K::Float;
        uint64_t bits = rng_();
        std::memcpy(&v.f, &bits, sizeof bits);  // any bit pattern: denormals, inf, nan, -0.0 ...
        if (pick(3) == 0) v.f = static_cast<double>(pick(1000)) / 8.0 - 60.0;
        break;
      }
      case 4: {
        v.kind = K::String;
        int n = pick(8);
        for (int i = 0; i < n; ++i) v.s += static_cast<char>(pick(3) ? 'a' + pick(26) : pick(256));
        break;
      }
      case 5: {
        v.kind = K::Tensor;
        int rank = pick(5);
        const char* dtypes[] = {"f16", "f32", "bf16", "i64", "b8", "c64", "f8e4m3fn"};
        v.tensor.dtype = dtypes[pick(7)];
        for (int i = 0; i < rank; ++i) v.tensor.shape.push_back(pick(1000));
        if (pick(2)) {
          v.tensor.has_strides = true;
          for (int i = 0; i < rank; ++i) v.tensor.strides.push_back(pick(100000));
        }
        break;
      }
      case 6: {
        v.kind = K::Dtype;
        const char* d[] = {"torch.float16", "torch.bool", "torch.int64", "torch.bfloat16"};
        v.s = d[pick(4)];
        break;
      }
      case 7: {
        v.kind = K::Device;
        const char* d[] = {"cpu", "cuda", "cuda:0", "cuda:3", "meta"};
        v.s = d[pick(5)];
        break;
      }
      case 8: {
        v.kind = K::Symbol;
        const char* d[] = {"torch.contiguous_format", "torch.channels_last", "torch.strided", "foo"};
        v.s = d[pick(4)];
        break;
      }
      case 9:
      case 10: {
        v.kind = k == 9 ? K::List : K::Tuple;
        int n = pick(4);
        for (int i = 0; i < n; ++i) v.items.push_back(value(depth + 1));
        break;
      }
      case 11: {
        v.kind = K::Dict;
        int n = pick(3);
        for (int i = 0; i < n; ++i) {
          v.keys.push_back("k" + std::to_string(i));
          v.items.push_back(value(depth + 1));
        }
        break;
      }
    }
    return v;
  }

 private:
  std::mt19937_64 rng_;
};

TEST(TraceFormat, RoundTripRandomValues) {
  Gen gen(12345);
  for (int iter = 0; iter < 3000; ++iter) {
    Call c;
    c.count = gen.pick(1000);
    int n = gen.pick(5);
    for (int i = 0; i < n; ++i) c.args.push_back(gen.value(0));
    int m = gen.pick(3);
    for (int i = 0; i < m; ++i) c.kwargs.emplace_back("kw" + std::to_string(i), gen.value(0));
    std::string text = format_call(c);
    Call back;
    ASSERT_NO_THROW(back = parse_call(text)) << text;
    ASSERT_TRUE(same_call(c, back)) << text << "\n" << format_call(back);
    ASSERT_EQ(format_call(back), text);
  }
}

TEST(TraceFormat, RoundTripWholeTrace) {
  const std::string text =
      "Operator: aten.add.Tensor\n"
      "cnt: 156, ((T([1, 512, 768], f16), T([1, 512, 768], f16)), {})\n"
      "  cnt: 2, ((T([4, 8], f32, stride=[1, 4]), 2), {'alpha': 0.5})\n"
      "# comment\n"
      "Operator: aten.native_layer_norm.default\n"
      "cnt: 25, ((T([32, 128, 768], f16), [768], T([768], f16), T([768], f16), 1e-12), {})\n";
  auto a = parse_trace(text);
  auto b = parse_trace(format_trace(a));
  EXPECT_TRUE(same_trace(a, b));
  EXPECT_EQ(format_trace(b), format_trace(a));
}

TEST(TraceFormat, SameValueSemantics) {
  EXPECT_TRUE(same_value(one_arg("nan"), one_arg("-nan")));
  EXPECT_FALSE(same_value(one_arg("0.0"), one_arg("-0.0")));
  EXPECT_FALSE(same_value(one_arg("1"), one_arg("1.0")));
  EXPECT_FALSE(same_value(one_arg("[1]"), one_arg("(1,)")));
  EXPECT_FALSE(same_value(one_arg("T([2], f16)"), one_arg("T([2], f16, [1])")));
  EXPECT_TRUE(same_value(one_arg("T([2], f16)"), one_arg("T([2], f16, None)")));
}

}  // namespace
}  // namespace kg::trace

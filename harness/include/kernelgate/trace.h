// The trace format (BackendBench's): operator headers and call lines with argument specs.
//
//   Operator: aten.add.Tensor
//   cnt: 156, ((T([1, 512, 768], f16), T([1, 512, 768], f16)), {})
//   cnt: 2, ((T([4, 8], f32, [1, 4]), 2), {'alpha': 0.5})
//
// A real parser: no text is ever evaluated. Every error names the line and column.
// This header has no torch dependency, so the parser builds alone for the fuzz target.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kg::trace {

struct Value;
using ValueList = std::vector<Value>;

// A tensor spec: shape, dtype short name (f32, f16, bf16, f64, i64, i32, i16, i8, u8, b8, c64, ...),
// optional strides (absent = contiguous).
struct TensorSpec {
  std::vector<int64_t> shape;
  std::string dtype;
  std::vector<int64_t> strides;
  bool has_strides = false;
};

struct Value {
  enum class Kind { None, Bool, Int, Float, String, Tensor, List, Tuple, Dict, Dtype, Device, Symbol };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;  // String, Dtype (e.g. "torch.float16"), Device ("cpu", "cuda:0"), Symbol (bare name)
  TensorSpec tensor;
  ValueList items;                // List, Tuple; Dict values
  std::vector<std::string> keys;  // Dict keys (same order as items)
};

// One call line: its count and its positional and keyword arguments.
struct Call {
  int64_t count = 1;
  ValueList args;
  std::vector<std::pair<std::string, Value>> kwargs;
  int line = 0;
};

struct OperatorEntry {
  std::string name;  // as written after "Operator:", e.g. "aten.add.Tensor"
  std::vector<Call> calls;
  int line = 0;
};

struct ParseError : std::runtime_error {
  ParseError(const std::string& source, int line, int column, const std::string& what);
  std::string source;
  int line;
  int column;
};

// Parses a whole trace file's text. `source` names the file in errors.
std::vector<OperatorEntry> parse_trace(const std::string& text, const std::string& source = "<trace>");

// Parses one argument spec, the "((args...), {kwargs...})" part of a call line, with or without
// a leading "cnt: N, ". Used by `kernelgate repro`.
Call parse_call(const std::string& text, const std::string& source = "<spec>");

// Renders a call back to trace syntax (round-trips through parse_call).
std::string format_call(const Call& call);
std::string format_value(const Value& v);

// --- Additions (kernelgate harness) ---------------------------------------------------------------
// format_call renders a full call line, "cnt: N, ((args...), {kwargs...})"; format_spec renders only
// the "((args...), {kwargs...})" part. format_trace renders whole entries (round-trips through
// parse_trace). The formatters expect well-formed values, as the parser produces them.
std::string format_spec(const Call& call);
std::string format_trace(const std::vector<OperatorEntry>& ops);

// Structural equality: NaN equals NaN, -0.0 differs from 0.0; source line numbers are ignored.
bool same_value(const Value& a, const Value& b);
bool same_call(const Call& a, const Call& b);
bool same_trace(const std::vector<OperatorEntry>& a, const std::vector<OperatorEntry>& b);

// Limits that keep hostile input from exhausting the stack or memory (exceeding one is a ParseError).
inline constexpr int kMaxNestingDepth = 64;                 // containers / T(...) / device(...)
inline constexpr std::size_t kMaxInputBytes = 256u << 20;   // one parse_trace / parse_call text
inline constexpr std::size_t kMaxValuesPerCall = 1u << 20;  // values + shape/stride entries
inline constexpr std::size_t kMaxValuesPerTrace = 1u << 23;

}  // namespace kg::trace

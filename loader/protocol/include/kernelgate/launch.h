// The nvrtc kind's launch table as both sides hold it: the expression language, its evaluator and
// the normalised text form the build writes beside the cubin and kg-runner reads (no TOML in the
// runner). The supervisor reads the table from the op folder's kernelgate.toml
// (kernelgate/launch_table.h, which also describes the TOML form).
//
// Expressions (a real parser; nothing is evaluated as code): integers, floats, + - * / % and
// parentheses, names of the overload's arguments (`self`, `other`, `alpha`, ...) and of its
// outputs (`out0`, `out1`, ...; allocated by the runner with the reference's dtype and shape),
// and the functions numel(t) dim(t) size(t, d) stride(t, d) ceil_div(a, b) min(a, b) max(a, b)
// and the casts i32 i64 u32 u64 f32 f64. `t.size(0)`, `t.numel()` are sugar for size(t, 0) and
// numel(t). A tensor passed as an argument is its data pointer. Integer division truncates;
// division by zero is an error. Parameter widths come from the cubin when the driver can tell
// (cuFuncGetParamInfo), else int64/double/pointer unless a cast says otherwise.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kg::protocol::launch {

// A parse error with where it happened (1-based line/column in the TOML file; 0 when unknown).
struct Error : std::runtime_error {
  Error(const std::string& key, int line, int column, const std::string& message)
      : std::runtime_error(key + ": " + message), key(key), line(line), column(column), message(message) {}
  std::string key;
  int line, column;
  std::string message;
};

struct Node;  // an expression tree node
using Expr = std::shared_ptr<const Node>;

// Parses one expression; throws Error (key given, column = offset into `text`, 1-based).
Expr parse_expr(const std::string& text, const std::string& key = "expression");
std::string to_string(const Expr& e);
// Names an expression mentions (for validation against the schema).
void collect_names(const Expr& e, std::vector<std::string>* out);
// The name when `e` is nothing but a name (`self`), else "".
std::string bare_name(const Expr& e);

// A runtime value.
struct Value {
  enum class Type { Int, Float, Tensor };
  Type type = Type::Int;
  int width = 0;  // bytes when cast (i32: 4, f32: 4, u64: 8, ...); 0 = natural
  bool is_unsigned = false;
  int64_t i = 0;
  double f = 0;
  // tensors
  uint64_t ptr = 0;
  std::vector<int64_t> sizes, strides;
  static Value of_int(int64_t v) {
    Value x;
    x.i = v;
    return x;
  }
  static Value of_float(double v) {
    Value x;
    x.type = Type::Float;
    x.f = v;
    return x;
  }
};
using Env = std::map<std::string, Value>;
// Throws std::runtime_error naming the expression on an unknown name, a type error, division by
// zero or overflow.
Value eval(const Expr& e, const Env& env);

struct Launch {
  std::string kernel;                           // name or name expression
  std::map<std::string, std::string> by_dtype;  // dtype ("float32") -> name or name expression
  std::string grid[3], block[3];                // sources; empty = 1
  std::string shared_mem = "0";
  std::vector<std::string> args;
  // Filled by the build: name expression -> lowered (mangled) name in the cubin.
  std::map<std::string, std::string> lowered;
};

struct Table {
  std::vector<Launch> launches;
  bool contiguous_inputs = true;
  // Every kernel name/name expression, for NVRTC.
  std::vector<std::string> kernel_names() const;
};

// The normalised form the build writes beside the cubin and kg-runner reads (line based).
std::string to_text(const Table& t);
Table from_text(const std::string& text);  // throws std::runtime_error

// Dtype names used in `kernel = { float32 = ... }`.
std::string dtype_name(int scalar_type);
// A kernel name or name expression ("relu_kernel", "relu<float>", "ns::k<2, float*>").
bool valid_kernel_name(const std::string& name);

}  // namespace kg::protocol::launch

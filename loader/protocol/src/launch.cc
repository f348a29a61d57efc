// The nvrtc kind's launch table as both sides hold it: expressions, their evaluator and the
// runner's text form.
#include "kernelgate/launch.h"

#include <c10/core/ScalarType.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>

namespace kg::protocol::launch {

// ---- expressions ------------------------------------------------------------------------------

struct Node {
  enum class Kind { Int, Float, Name, Unary, Binary, Call };
  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  std::string name;  // Name, Call (function), Binary/Unary (operator)
  std::vector<Expr> kids;
};

namespace {

const std::set<std::string>& functions() {
  static const std::set<std::string> f = {"numel", "dim", "size", "stride", "ceil_div", "min", "max",
                                          "i32",   "i64", "u32",  "u64",    "f32",      "f64"};
  return f;
}

int arity(const std::string& fn) {
  if (fn == "size" || fn == "stride" || fn == "ceil_div" || fn == "min" || fn == "max") return 2;
  return 1;
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& key) : s_(text), key_(key) {}

  Expr parse() {
    if (s_.size() > 4096) fail(0, "expression longer than 4096 characters");
    Expr e = sum();
    skip();
    if (p_ != s_.size()) fail(p_, std::string("unexpected '") + s_[p_] + "'");
    return e;
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& msg) {
    throw Error(key_, 0, static_cast<int>(at) + 1, msg + " in \"" + s_ + "\" at column " + std::to_string(at + 1));
  }
  void skip() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t')) ++p_;
  }
  bool eat(char c) {
    skip();
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  static Expr make(Node n) { return std::make_shared<const Node>(std::move(n)); }
  Expr binary(const std::string& op, Expr a, Expr b) {
    Node n;
    n.kind = Node::Kind::Binary;
    n.name = op;
    n.kids = {std::move(a), std::move(b)};
    return make(std::move(n));
  }
  Expr sum() {
    if (++depth_ > 64) fail(p_, "expression nested too deeply");
    Expr e = product();
    while (true) {
      if (eat('+')) e = binary("+", e, product());
      else if (eat('-')) e = binary("-", e, product());
      else break;
    }
    --depth_;
    return e;
  }
  Expr product() {
    Expr e = unary();
    while (true) {
      if (eat('*')) e = binary("*", e, unary());
      else if (eat('/')) e = binary("/", e, unary());
      else if (eat('%')) e = binary("%", e, unary());
      else break;
    }
    return e;
  }
  Expr unary() {
    if (eat('-')) {
      if (++depth_ > 64) fail(p_, "expression nested too deeply");
      Node n;
      n.kind = Node::Kind::Unary;
      n.name = "-";
      n.kids = {unary()};
      --depth_;
      return make(std::move(n));
    }
    if (eat('+')) return unary();
    return postfix();
  }
  std::string ident() {
    skip();
    size_t b = p_;
    while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_')) ++p_;
    return s_.substr(b, p_ - b);
  }
  std::vector<Expr> call_args() {
    std::vector<Expr> args;
    if (eat(')')) return args;
    while (true) {
      args.push_back(sum());
      if (eat(')')) return args;
      if (!eat(',')) fail(p_, "expected ',' or ')'");
    }
  }
  Expr call(const std::string& fn, size_t at, std::vector<Expr> args) {
    if (!functions().count(fn)) fail(at, "unknown function '" + fn + "'");
    if (static_cast<int>(args.size()) != arity(fn))
      fail(at, fn + "() takes " + std::to_string(arity(fn)) + " argument" + (arity(fn) == 1 ? "" : "s") + ", got " +
                   std::to_string(args.size()));
    Node n;
    n.kind = Node::Kind::Call;
    n.name = fn;
    n.kids = std::move(args);
    return make(std::move(n));
  }
  Expr postfix() {
    Expr e = primary();
    // t.size(0), t.numel(), t.numel: method sugar for the tensor functions
    while (true) {
      skip();
      if (p_ < s_.size() && s_[p_] == '.' && p_ + 1 < s_.size() && std::isalpha(static_cast<unsigned char>(s_[p_ + 1]))) {
        ++p_;
        size_t at = p_;
        std::string m = ident();
        std::vector<Expr> args = {e};
        if (eat('(')) {
          for (auto& a : call_args()) args.push_back(a);
        }
        e = call(m, at, std::move(args));
      } else {
        return e;
      }
    }
  }
  Expr primary() {
    skip();
    if (p_ >= s_.size()) fail(p_, "expression ends early");
    char c = s_[p_];
    if (c == '(') {
      ++p_;
      Expr e = sum();
      if (!eat(')')) fail(p_, "expected ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && p_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_ + 1]))))
      return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t at = p_;
      std::string id = ident();
      if (eat('(')) return call(id, at, call_args());
      Node n;
      n.kind = Node::Kind::Name;
      n.name = id;
      return make(std::move(n));
    }
    fail(p_, std::string("unexpected '") + c + "'");
  }
  Expr number() {
    size_t b = p_;
    Node n;
    if (s_.compare(p_, 2, "0x") == 0 || s_.compare(p_, 2, "0X") == 0) {
      p_ += 2;
      while (p_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[p_]))) ++p_;
    } else {
      while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) ++p_;
      bool is_float = false;
      if (p_ < s_.size() && s_[p_] == '.') {
        is_float = true;
        ++p_;
        while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) ++p_;
      }
      if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
        is_float = true;
        ++p_;
        if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
        size_t d = p_;
        while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) ++p_;
        if (d == p_) fail(d, "bad exponent");
      }
      if (is_float) {
        n.kind = Node::Kind::Float;
        n.f = std::strtod(s_.substr(b, p_ - b).c_str(), nullptr);
        return make(std::move(n));
      }
    }
    errno = 0;
    std::string digits = s_.substr(b, p_ - b);
    unsigned long long v = std::strtoull(digits.c_str(), nullptr, 0);
    if (errno == ERANGE || v > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()) || digits == "0x" || digits == "0X")
      fail(b, "integer literal out of range");
    if (p_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_')) fail(p_, "bad number");
    n.kind = Node::Kind::Int;
    n.i = static_cast<int64_t>(v);
    return make(std::move(n));
  }

  const std::string& s_;
  std::string key_;
  size_t p_ = 0;
  int depth_ = 0;
};

[[noreturn]] void eval_fail(const std::string& msg) { throw std::runtime_error(msg); }

int64_t checked(__int128 v, const char* what) {
  if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min())
    eval_fail(std::string("integer overflow in ") + what);
  return static_cast<int64_t>(v);
}

double as_double(const Value& v) {
  if (v.type == Value::Type::Tensor) eval_fail("a tensor is used as a number");
  return v.type == Value::Type::Int ? static_cast<double>(v.i) : v.f;
}

const Value& tensor_arg(const Value& v, const std::string& fn) {
  if (v.type != Value::Type::Tensor) eval_fail(fn + "() needs a tensor");
  return v;
}

int64_t dim_index(const Value& t, const Value& d, const std::string& fn) {
  if (d.type != Value::Type::Int) eval_fail(fn + "(): the dimension must be an integer");
  int64_t n = static_cast<int64_t>(t.sizes.size());
  int64_t i = d.i < 0 ? d.i + n : d.i;
  if (i < 0 || i >= n) eval_fail(fn + "(): dimension " + std::to_string(d.i) + " out of range for a " + std::to_string(n) + "-d tensor");
  return i;
}

}  // namespace

Expr parse_expr(const std::string& text, const std::string& key) { return Parser(text, key).parse(); }

std::string to_string(const Expr& e) {
  switch (e->kind) {
    case Node::Kind::Int: return std::to_string(e->i);
    case Node::Kind::Float: {
      std::ostringstream o;
      o.precision(17);
      o << e->f;
      std::string s = o.str();
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      return s;
    }
    case Node::Kind::Name: return e->name;
    case Node::Kind::Unary: return "(-" + to_string(e->kids[0]) + ")";
    case Node::Kind::Binary: return "(" + to_string(e->kids[0]) + " " + e->name + " " + to_string(e->kids[1]) + ")";
    case Node::Kind::Call: {
      std::string s = e->name + "(";
      for (size_t i = 0; i < e->kids.size(); ++i) s += (i ? ", " : "") + to_string(e->kids[i]);
      return s + ")";
    }
  }
  return "?";
}

void collect_names(const Expr& e, std::vector<std::string>* out) {
  if (e->kind == Node::Kind::Name) out->push_back(e->name);
  for (const auto& k : e->kids) collect_names(k, out);
}

std::string bare_name(const Expr& e) { return e->kind == Node::Kind::Name ? e->name : ""; }

Value eval(const Expr& e, const Env& env) {
  switch (e->kind) {
    case Node::Kind::Int: return Value::of_int(e->i);
    case Node::Kind::Float: return Value::of_float(e->f);
    case Node::Kind::Name: {
      auto it = env.find(e->name);
      if (it == env.end()) eval_fail("unknown name '" + e->name + "'");
      return it->second;
    }
    case Node::Kind::Unary: {
      Value v = eval(e->kids[0], env);
      if (v.type == Value::Type::Tensor) eval_fail("cannot negate a tensor");
      if (v.type == Value::Type::Float) return Value::of_float(-v.f);
      return Value::of_int(checked(-static_cast<__int128>(v.i), "negation"));
    }
    case Node::Kind::Binary: {
      Value a = eval(e->kids[0], env), b = eval(e->kids[1], env);
      if (a.type == Value::Type::Tensor || b.type == Value::Type::Tensor)
        eval_fail("arithmetic on a tensor (use numel(t), size(t, d) ...)");
      const std::string& op = e->name;
      if (a.type == Value::Type::Int && b.type == Value::Type::Int) {
        __int128 x = a.i, y = b.i;
        if (op == "+") return Value::of_int(checked(x + y, "+"));
        if (op == "-") return Value::of_int(checked(x - y, "-"));
        if (op == "*") return Value::of_int(checked(x * y, "*"));
        if (y == 0) eval_fail("division by zero in " + to_string(e));
        if (op == "/") return Value::of_int(checked(x / y, "/"));
        return Value::of_int(checked(x % y, "%"));
      }
      double x = as_double(a), y = as_double(b);
      if (op == "+") return Value::of_float(x + y);
      if (op == "-") return Value::of_float(x - y);
      if (op == "*") return Value::of_float(x * y);
      if (y == 0) eval_fail("division by zero in " + to_string(e));
      if (op == "/") return Value::of_float(x / y);
      return Value::of_float(std::fmod(x, y));
    }
    case Node::Kind::Call: {
      const std::string& fn = e->name;
      std::vector<Value> a;
      for (const auto& k : e->kids) a.push_back(eval(k, env));
      if (fn == "numel") {
        const Value& t = tensor_arg(a[0], fn);
        __int128 n = 1;
        for (int64_t s : t.sizes) n = checked(n * s, "numel");
        return Value::of_int(static_cast<int64_t>(n));
      }
      if (fn == "dim") return Value::of_int(static_cast<int64_t>(tensor_arg(a[0], fn).sizes.size()));
      if (fn == "size") return Value::of_int(a[0].sizes.at(dim_index(tensor_arg(a[0], fn), a[1], fn)));
      if (fn == "stride") return Value::of_int(a[0].strides.at(dim_index(tensor_arg(a[0], fn), a[1], fn)));
      if (fn == "ceil_div") {
        if (a[0].type != Value::Type::Int || a[1].type != Value::Type::Int) eval_fail("ceil_div() needs integers");
        if (a[1].i <= 0) eval_fail("ceil_div() by " + std::to_string(a[1].i));
        if (a[0].i < 0) eval_fail("ceil_div() of a negative number");
        return Value::of_int(a[0].i / a[1].i + (a[0].i % a[1].i != 0));
      }
      if (fn == "min" || fn == "max") {
        if (a[0].type == Value::Type::Int && a[1].type == Value::Type::Int)
          return Value::of_int(fn == "min" ? std::min(a[0].i, a[1].i) : std::max(a[0].i, a[1].i));
        double x = as_double(a[0]), y = as_double(a[1]);
        return Value::of_float(fn == "min" ? std::min(x, y) : std::max(x, y));
      }
      // casts
      Value v = a[0];
      if (v.type == Value::Type::Tensor) eval_fail(fn + "() of a tensor");
      if (fn[0] == 'f') {
        Value r = Value::of_float(as_double(v));
        r.width = fn == "f32" ? 4 : 8;
        return r;
      }
      int64_t x = v.type == Value::Type::Int ? v.i : static_cast<int64_t>(v.f);
      Value r = Value::of_int(x);
      r.width = (fn == "i32" || fn == "u32") ? 4 : 8;
      r.is_unsigned = fn[0] == 'u';
      if (fn == "i32" && (x < INT32_MIN || x > INT32_MAX)) eval_fail("i32(): " + std::to_string(x) + " does not fit");
      if (fn == "u32" && (x < 0 || x > static_cast<int64_t>(UINT32_MAX))) eval_fail("u32(): " + std::to_string(x) + " does not fit");
      if (fn == "u64" && x < 0) eval_fail("u64(): negative value");
      return r;
    }
  }
  eval_fail("bad expression");
}

// ---- the table ---------------------------------------------------------------------------------

std::vector<std::string> Table::kernel_names() const {
  std::set<std::string> names;
  for (const auto& l : launches) {
    if (!l.kernel.empty()) names.insert(l.kernel);
    for (const auto& [dt, n] : l.by_dtype) names.insert(n);
  }
  return {names.begin(), names.end()};
}

std::string dtype_name(int st) {
  switch (static_cast<c10::ScalarType>(st)) {
    case c10::ScalarType::Float: return "float32";
    case c10::ScalarType::Double: return "float64";
    case c10::ScalarType::Half: return "float16";
    case c10::ScalarType::BFloat16: return "bfloat16";
    case c10::ScalarType::Int: return "int32";
    case c10::ScalarType::Long: return "int64";
    case c10::ScalarType::Short: return "int16";
    case c10::ScalarType::Char: return "int8";
    case c10::ScalarType::Byte: return "uint8";
    case c10::ScalarType::Bool: return "bool";
    case c10::ScalarType::ComplexFloat: return "complex64";
    case c10::ScalarType::ComplexDouble: return "complex128";
    default: return "other";
  }
}

bool valid_kernel_name(const std::string& n) {
  if (n.empty() || n.size() > 512) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '<' || c == '>' || c == ',' || c == ' ' || c == ':' || c == '*' ||
          c == '&'))
      return false;
  return std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_' || n[0] == ':';
}

// ---- the runner's text form ----------------------------------------------------------------------
// kernelgate-launch 1
// contiguous 1
// launch
// kernel NAME | kernel.DTYPE NAME      (names may contain spaces: the rest of the line)
// lowered EXPR<TAB>LOWERED
// grid E<TAB>E<TAB>E   block ...   shared E   arg E
// end

std::string to_text(const Table& t) {
  std::ostringstream o;
  o << "kernelgate-launch 1\ncontiguous " << (t.contiguous_inputs ? 1 : 0) << "\n";
  for (const auto& l : t.launches) {
    o << "launch\n";
    if (!l.kernel.empty()) o << "kernel " << l.kernel << "\n";
    for (const auto& [dt, n] : l.by_dtype) o << "kernel." << dt << " " << n << "\n";
    for (const auto& [e, low] : l.lowered) o << "lowered " << e << "\t" << low << "\n";
    o << "grid " << l.grid[0] << "\t" << l.grid[1] << "\t" << l.grid[2] << "\n";
    o << "block " << l.block[0] << "\t" << l.block[1] << "\t" << l.block[2] << "\n";
    o << "shared " << l.shared_mem << "\n";
    for (const auto& a : l.args) o << "arg " << a << "\n";
    o << "end\n";
  }
  return o.str();
}

Table from_text(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  auto bad = [](const std::string& why) { throw std::runtime_error("launch table: " + why); };
  if (!std::getline(in, line) || line != "kernelgate-launch 1") bad("bad header");
  Table t;
  Launch* cur = nullptr;
  auto split3 = [](const std::string& s, std::string out[3]) {
    size_t a = s.find('\t'), b = a == std::string::npos ? a : s.find('\t', a + 1);
    out[0] = s.substr(0, a);
    out[1] = a == std::string::npos ? "" : s.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
    out[2] = b == std::string::npos ? "" : s.substr(b + 1);
  };
  while (std::getline(in, line)) {
    auto sp = line.find(' ');
    std::string word = line.substr(0, sp), rest = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (word == "contiguous") t.contiguous_inputs = rest == "1";
    else if (word == "launch") {
      t.launches.emplace_back();
      cur = &t.launches.back();
    } else if (word == "end") cur = nullptr;
    else if (!cur) bad("'" + word + "' outside a launch");
    else if (word == "kernel") cur->kernel = rest;
    else if (word.rfind("kernel.", 0) == 0) cur->by_dtype[word.substr(7)] = rest;
    else if (word == "lowered") {
      auto tab = rest.find('\t');
      if (tab == std::string::npos) bad("lowered line without a tab");
      cur->lowered[rest.substr(0, tab)] = rest.substr(tab + 1);
    } else if (word == "grid") split3(rest, cur->grid);
    else if (word == "block") split3(rest, cur->block);
    else if (word == "shared") cur->shared_mem = rest;
    else if (word == "arg") cur->args.push_back(rest);
    else bad("unknown line '" + word + "'");
  }
  if (t.launches.empty()) bad("no launches");
  return t;
}

}  // namespace kg::protocol::launch

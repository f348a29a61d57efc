// Parser for the BackendBench trace format (see docs/trace-format.md).
//
// Hand-written recursive descent over a small lexer. Nothing is evaluated. Every error is a
// ParseError "SOURCE:LINE:COL: expected X, found Y". Nesting depth, input size and the number of
// values are bounded, so hostile input can neither overflow the stack nor exhaust memory.
// No torch headers here: this file builds alone for the fuzz target.
#include "kernelgate/trace.h"

#include "kernelgate/names.h"
#include "kernelgate/text_safety.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_set>

namespace kg::trace {

namespace {

std::string make_message(const std::string& source, int line, int column, const std::string& what) {
  return source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + what;
}

}  // namespace

ParseError::ParseError(const std::string& source_, int line_, int column_, const std::string& what)
    : std::runtime_error(make_message(source_, line_, column_, what)), source(source_), line(line_), column(column_) {}

namespace {

// ---------------------------------------------------------------------------------------------
// Tables

// Members of `torch.` that are dtypes kernelgate has no name for (names.h names the others).
constexpr const char* kOtherTorchDtypes[] = {
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8", "quint8",
    "qint32",        "quint4x2",        "quint2x4",    "bits1x8",         "bits2x4",        "bits4x2",          "bits8", "bits16",
};

// A bare dtype abbreviation BackendBench binds as a name when it evaluates a spec (f16 ->
// torch.float16); "" for any other name.
std::string abbr_to_full(std::string_view name) {
  const auto d = names::try_parse_short_dtype(name);
  return d && names::is_trace_abbreviation(*d) ? names::torch_spelling(*d) : "";
}

// The inverse, for the dtype's own torch name only ("torch.float16", not "torch.half").
std::optional<std::string_view> full_to_abbr(std::string_view full) {
  for (names::Dtype d : names::all_dtypes())
    if (names::is_trace_abbreviation(d) && full == names::torch_spelling(d)) return names::short_name(d);
  return std::nullopt;
}

bool is_torch_dtype(std::string_view dotted) {
  constexpr std::string_view prefix = "torch.";
  if (dotted.substr(0, prefix.size()) != prefix) return false;
  if (names::try_parse_torch_dtype(dotted)) return true;
  std::string_view member = dotted.substr(prefix.size());
  for (const char* d : kOtherTorchDtypes)
    if (member == d) return true;
  return false;
}

// "th" is bound to torch by BackendBench; normalize "th.x" to "torch.x".
std::string normalize_name(const std::string& name) {
  if (name.compare(0, 3, "th.") == 0) return "torch." + name.substr(3);
  return name;
}

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return "a bool";
    case Value::Kind::Int: return "an integer";
    case Value::Kind::Float: return "a float";
    case Value::Kind::String: return "a string";
    case Value::Kind::Tensor: return "a tensor";
    case Value::Kind::List: return "a list";
    case Value::Kind::Tuple: return "a tuple";
    case Value::Kind::Dict: return "a dict";
    case Value::Kind::Dtype: return "a dtype";
    case Value::Kind::Device: return "a device";
    case Value::Kind::Symbol: return "a name";
  }
  return "a value";
}

// Shows a piece of source text in a message: quoted, shortened, non-printable bytes escaped.
std::string show_text(std::string_view text, std::size_t max_len = 24) { return text::quoted_excerpt(text, max_len); }

// ---------------------------------------------------------------------------------------------
// Lexer

struct Token {
  enum Type { End, Int, Float, Str, Ident, Punct };
  Type type = End;
  std::string_view text;  // raw source text of the token
  std::string str;        // decoded string literal
  char punct = 0;
  int line = 0;
  int col = 0;
};

class Parser {
 public:
  // `text` is the region to parse; `line`/`line_start` position it in the original source.
  // In line mode the region is one line of a trace file: newlines never occur in it and its end
  // reads as "end of line".
  Parser(std::string_view text, const std::string& source, int line, const char* line_start, bool line_mode, std::size_t* trace_values)
      : p_(text.data()),
        end_(text.data() + text.size()),
        source_(source),
        line_(line),
        line_start_(line_start),
        line_mode_(line_mode),
        trace_values_(trace_values) {}

  [[noreturn]] void fail_at(int line, int col, const std::string& msg) const { throw ParseError(source_, line, col, msg); }
  [[noreturn]] void fail_tok(const Token& t, const std::string& msg) const { fail_at(t.line, t.col, msg); }
  [[noreturn]] void expected(const std::string& what, const Token& found) const {
    fail_tok(found, "expected " + what + ", found " + describe(found));
  }

  std::string describe(const Token& t) const {
    switch (t.type) {
      case Token::End: return line_mode_ ? "end of line" : "end of input";
      case Token::Int:
      case Token::Float: return "number " + show_text(t.text);
      case Token::Str: {
        std::string raw = t.text.size() > 26 ? std::string(t.text.substr(0, 24)) + "..." : std::string(t.text);
        for (char& ch : raw)
          if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
        return "string " + raw;
      }
      case Token::Ident: return "name " + show_text(t.text);
      case Token::Punct: return show_text(t.text);
    }
    return "?";
  }

  int col_of(const char* q) const { return static_cast<int>(q - line_start_) + 1; }

  const Token& peek() {
    if (!has_peek_) {
      peeked_ = lex();
      has_peek_ = true;
    }
    return peeked_;
  }
  Token next() {
    peek();
    has_peek_ = false;
    return std::move(peeked_);
  }
  bool peek_punct(char c) {
    const Token& t = peek();
    return t.type == Token::Punct && t.punct == c;
  }
  bool accept_punct(char c) {
    if (peek_punct(c)) {
      next();
      return true;
    }
    return false;
  }
  Token expect_punct(char c, const std::string& what) {
    Token t = next();
    if (t.type != Token::Punct || t.punct != c) expected(what, t);
    return t;
  }

  // Raw access used by the "cnt:" prefix check.
  void skip_space() {
    while (p_ < end_) {
      char c = *p_;
      if (c == ' ' || c == '\t' || c == '\f' || c == '\v') {
        ++p_;
      } else if (!line_mode_ && (c == '\n' || c == '\r')) {
        ++p_;
        if (c == '\r' && p_ < end_ && *p_ == '\n') ++p_;
        ++line_;
        line_start_ = p_;
      } else {
        break;
      }
    }
  }
  bool raw_starts_with(std::string_view s) {
    skip_space();
    return static_cast<std::size_t>(end_ - p_) >= s.size() && std::string_view(p_, s.size()) == s;
  }
  void raw_advance(std::size_t n) { p_ += n; }

  // ----- values -----

  void count_values(const Token& at, std::size_t n = 1) {
    call_values_ += n;
    if (call_values_ > kMaxValuesPerCall) fail_tok(at, "too many values in one call (limit " + std::to_string(kMaxValuesPerCall) + ")");
    if (trace_values_) {
      *trace_values_ += n;
      if (*trace_values_ > kMaxValuesPerTrace)
        fail_tok(at, "too many values in one trace (limit " + std::to_string(kMaxValuesPerTrace) + ")");
    }
  }

  void check_depth(const Token& at, int depth) {
    if (depth > kMaxNestingDepth) fail_tok(at, "nesting deeper than " + std::to_string(kMaxNestingDepth) + " levels");
  }

  Value parse_value(int depth) {
    Token t = next();
    check_depth(t, depth);
    count_values(t);
    Value v;
    switch (t.type) {
      case Token::End: expected("a value", t);
      case Token::Int:
        v.kind = Value::Kind::Int;
        v.i = int_value(t, false);
        return v;
      case Token::Float:
        v.kind = Value::Kind::Float;
        v.f = float_value(t, false);
        return v;
      case Token::Str:
        v.kind = Value::Kind::String;
        v.s = std::move(t.str);
        return v;
      case Token::Ident: return parse_name(t, depth);
      case Token::Punct: break;
    }
    switch (t.punct) {
      case '-':
      case '+': return parse_signed(t);
      case '(': return parse_paren(t, depth);
      case '[':
        v.kind = Value::Kind::List;
        parse_sequence(v.items, ']', depth);
        return v;
      case '{': return parse_dict(depth);
      default: expected("a value", t);
    }
  }

  Value parse_signed(const Token& sign) {
    bool neg = sign.punct == '-';
    Token t = next();
    Value v;
    if (t.type == Token::Int) {
      v.kind = Value::Kind::Int;
      v.i = int_value(t, neg, &sign);
      return v;
    }
    if (t.type == Token::Float) {
      v.kind = Value::Kind::Float;
      v.f = float_value(t, neg);
      return v;
    }
    if (t.type == Token::Ident) {
      double f = 0;
      if (special_float(t.text, &f)) {
        v.kind = Value::Kind::Float;
        v.f = neg ? -f : f;
        return v;
      }
    }
    expected(std::string("a number after '") + sign.punct + "'", t);
  }

  static bool special_float(std::string_view name, double* out) {
    if (name == "inf" || name == "math.inf") {
      *out = std::numeric_limits<double>::infinity();
      return true;
    }
    if (name == "nan" || name == "math.nan") {
      *out = std::numeric_limits<double>::quiet_NaN();
      return true;
    }
    return false;
  }

  // Items up to `close`, comma separated, trailing comma allowed. The opener has been consumed.
  void parse_sequence(ValueList& items, char close, int depth) {
    const std::string closing = std::string("'") + close + "'";
    while (true) {
      if (accept_punct(close)) return;
      items.push_back(parse_value(depth + 1));
      if (accept_punct(',')) continue;
      expect_punct(close, "',' or " + closing);
      return;
    }
  }

  // "(" seen: (), (x,), (x, y), or a parenthesized value (x), as in Python.
  Value parse_paren(const Token& open, int depth) {
    (void)open;
    Value v;
    v.kind = Value::Kind::Tuple;
    if (accept_punct(')')) return v;
    Value first = parse_value(depth + 1);
    if (accept_punct(')')) return first;  // (x) is x
    expect_punct(',', "',' or ')'");
    v.items.push_back(std::move(first));
    parse_sequence(v.items, ')', depth);
    return v;
  }

  Value parse_dict(int depth) {
    Value v;
    v.kind = Value::Kind::Dict;
    std::unordered_set<std::string> seen;
    while (true) {
      Token k = next();
      if (k.type == Token::Punct && k.punct == '}') return v;
      if (k.type != Token::Str) expected("a string key or '}'", k);
      if (!seen.insert(k.str).second) fail_tok(k, "duplicate key " + show_text(k.str));
      expect_punct(':', "':' after dict key");
      v.keys.push_back(std::move(k.str));
      v.items.push_back(parse_value(depth + 1));
      if (accept_punct(',')) continue;
      expect_punct('}', "',' or '}'");
      return v;
    }
  }

  Value parse_name(const Token& t, int depth) {
    std::string_view name = t.text;
    Value v;
    if (peek_punct('(')) {
      Token open = next();
      (void)open;
      if (name == "T") return parse_tensor(t, depth);
      if (name == "device" || name == "torch.device" || name == "th.device") return parse_device(t, depth);
      if (name == "ST") fail_tok(t, "sparse tensors (ST(...)) are not supported");
      fail_tok(t, "unknown call " + show_text(name) + ": expected T(...), device(...) or torch.device(...)");
    }
    if (name == "None") return v;
    if (name == "True" || name == "False") {
      v.kind = Value::Kind::Bool;
      v.b = name == "True";
      return v;
    }
    if (special_float(name, &v.f)) {
      v.kind = Value::Kind::Float;
      return v;
    }
    std::string n = normalize_name(std::string(name));
    if (is_torch_dtype(n)) {
      v.kind = Value::Kind::Dtype;
      v.s = std::move(n);
      return v;
    }
    if (std::string full = abbr_to_full(n); !full.empty()) {
      v.kind = Value::Kind::Dtype;
      v.s = std::move(full);
      return v;
    }
    v.kind = Value::Kind::Symbol;
    v.s = std::move(n);
    return v;
  }

  // A list or tuple of integers (tensor shape / strides). `(n)` reads as a one-element sequence.
  std::vector<int64_t> parse_int_seq(const char* what, bool non_negative) {
    Token open = next();
    char close;
    if (open.type == Token::Punct && open.punct == '[') {
      close = ']';
    } else if (open.type == Token::Punct && open.punct == '(') {
      close = ')';
    } else {
      expected(std::string("'[' starting the ") + what, open);
    }
    std::vector<int64_t> out;
    while (true) {
      if (accept_punct(close)) return out;
      Token t = next();
      count_values(t);
      bool neg = false;
      Token sign;
      if (t.type == Token::Punct && (t.punct == '-' || t.punct == '+')) {
        neg = t.punct == '-';
        sign = t;
        t = next();
      }
      if (t.type != Token::Int) expected(std::string("an integer in the ") + what, t);
      int64_t n = int_value(t, neg, sign.type == Token::Punct ? &sign : nullptr);
      if (non_negative && n < 0) fail_tok(sign, std::string("negative size ") + std::to_string(n) + " in the " + what);
      out.push_back(n);
      if (accept_punct(',')) continue;
      expect_punct(close, std::string("',' or '") + close + "' in the " + what);
      return out;
    }
  }

  std::string parse_tensor_dtype() {
    Token t = next();
    std::string name;
    if (t.type == Token::Ident) {
      name = std::string(t.text);
    } else if (t.type == Token::Str) {
      name = t.str;
      bool ok = !name.empty() && is_ident_start(name[0]);
      for (std::size_t i = 0; ok && i < name.size(); ++i)
        ok = is_ident_char(name[i]) || (name[i] == '.' && i + 1 < name.size() && is_ident_start(name[i + 1]));
      if (!ok) fail_tok(t, "expected a dtype name, found string " + show_text(t.text));
    } else {
      expected("a dtype name (such as f32) after the tensor shape", t);
    }
    name = normalize_name(name);
    if (const auto abbr = full_to_abbr(name)) return std::string(*abbr);
    return name;
  }

  // "T(" seen (`open` is the T): T(shape, dtype[, strides][, stride=strides]) with strides a list,
  // tuple or None.
  Value parse_tensor(const Token& open, int depth) {
    check_depth(open, depth + 1);
    Value v;
    v.kind = Value::Kind::Tensor;
    v.tensor.shape = parse_int_seq("tensor shape", true);
    expect_punct(',', "',' after the tensor shape");
    v.tensor.dtype = parse_tensor_dtype();
    bool have_stride_arg = false;
    while (accept_punct(',')) {
      if (peek_punct(')')) break;
      const Token& t = peek();
      if (have_stride_arg) expected("')' closing T(...)", t);
      if (t.type == Token::Ident && t.text == "stride") {
        next();
        expect_punct('=', "'=' after 'stride'");
      } else if (t.type == Token::Ident && t.text != "None") {
        expected("strides ('[', 'stride=' or None)", t);
      }
      have_stride_arg = true;
      if (peek().type == Token::Ident && peek().text == "None") {
        next();
        continue;
      }
      v.tensor.strides = parse_int_seq("tensor strides", false);
      v.tensor.has_strides = true;
      if (v.tensor.strides.size() != v.tensor.shape.size())
        fail_tok(open, "tensor has " + std::to_string(v.tensor.shape.size()) + " dimensions but " +
                           std::to_string(v.tensor.strides.size()) + " strides");
    }
    expect_punct(')', "',' or ')' closing T(...)");
    return v;
  }

  // "device(" seen (`open` is the name): device('cuda'), device('cuda:0'), device('cuda', 0), device(type='cuda', index=0).
  Value parse_device(const Token& open, int depth) {
    check_depth(open, depth + 1);
    std::string type;
    int64_t index = -1;
    bool have_type = false, have_index = false;
    Token type_tok = open;
    int pos = 0;
    while (!accept_punct(')')) {
      Token t = next();
      std::string key;
      if (t.type == Token::Ident && peek_punct('=')) {
        key = std::string(t.text);
        next();
        if (key != "type" && key != "index") fail_tok(t, "unknown device argument " + show_text(key));
        t = next();
      } else {
        key = pos == 0 ? "type" : pos == 1 ? "index" : "";
        if (key.empty()) expected("')' closing device(...)", t);
        ++pos;
      }
      if (key == "type") {
        if (have_type) fail_tok(t, "device type given twice");
        if (t.type != Token::Str) expected("a device type string such as 'cuda'", t);
        have_type = true;
        type_tok = t;
        type = t.str;
        std::size_t colon = type.find(':');
        if (colon != std::string::npos) {
          std::string idx = type.substr(colon + 1);
          type.resize(colon);
          int64_t n = 0;
          auto r = std::from_chars(idx.data(), idx.data() + idx.size(), n);
          if (idx.empty() || !is_digit(idx[0]) || r.ec != std::errc() || r.ptr != idx.data() + idx.size() ||
              n > std::numeric_limits<int32_t>::max())
            fail_tok(t, "bad device index in " + show_text(t.str));
          index = n;
          have_index = true;
        }
        bool ok = !type.empty() && is_ident_start(type[0]);
        for (char c : type) ok = ok && is_ident_char(c);
        if (!ok) fail_tok(t, "bad device type " + show_text(type));
      } else {
        if (have_index) fail_tok(t, "device index given twice");
        have_index = true;
        if (t.type == Token::Ident && t.text == "None") {
          index = -1;
        } else {
          if (t.type != Token::Int) expected("a device index", t);
          index = int_value(t, false);
          if (index > std::numeric_limits<int32_t>::max()) fail_tok(t, "device index too large");
        }
      }
      if (!accept_punct(',')) {
        expect_punct(')', "',' or ')' closing device(...)");
        break;
      }
    }
    if (!have_type) fail_tok(open, "device(...) without a device type");
    Value v;
    v.kind = Value::Kind::Device;
    v.s = type;
    if (index >= 0) v.s += ":" + std::to_string(index);
    return v;
  }

  int64_t int_value(const Token& t, bool negative, const Token* sign = nullptr) {
    uint64_t mag = 0;
    bool overflow = false;
    for (char c : t.text) {
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (mag > (std::numeric_limits<uint64_t>::max() - d) / 10) {
        overflow = true;
        break;
      }
      mag = mag * 10 + d;
    }
    const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (overflow || mag > limit) {
      const Token& at = sign ? *sign : t;
      fail_tok(at, "integer " + std::string(negative ? "-" : "") + std::string(t.text) + " out of int64 range");
    }
    if (negative) return mag == (uint64_t{1} << 63) ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(mag);
    return static_cast<int64_t>(mag);
  }

  double float_value(const Token& t, bool negative) {
    double d = 0;
    const char* b = t.text.data();
    const char* e = b + t.text.size();
    auto r = std::from_chars(b, e, d);
    if (r.ec == std::errc::result_out_of_range) {
      // Python gives inf for overflow and 0 / a denormal for underflow; strtod does the same.
      std::string copy(t.text);
      d = std::strtod(copy.c_str(), nullptr);
    } else if (r.ec != std::errc() || r.ptr != e) {
      fail_tok(t, "bad number " + show_text(t.text));
    }
    return negative ? -d : d;
  }

  // ----- lexer -----

  Token lex() {
    skip_space();
    Token t;
    t.line = line_;
    t.col = col_of(p_);
    const char* start = p_;
    if (p_ >= end_) {
      t.type = Token::End;
      return t;
    }
    char c = *p_;
    if (is_digit(c) || (c == '.' && p_ + 1 < end_ && is_digit(p_[1]))) {
      lex_number(t);
    } else if (is_ident_start(c)) {
      ++p_;
      while (true) {
        while (p_ < end_ && is_ident_char(*p_)) ++p_;
        if (p_ + 1 < end_ && *p_ == '.' && is_ident_start(p_[1])) {
          ++p_;
          continue;
        }
        break;
      }
      t.type = Token::Ident;
    } else if (c == '\'' || c == '"') {
      lex_string(t);
    } else if (std::strchr("()[]{},:=-+", c) != nullptr && c != '\0') {
      ++p_;
      t.type = Token::Punct;
      t.punct = c;
    } else {
      auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x7f) {
        static const char* hex = "0123456789abcdef";
        std::string b = "0x";
        b += hex[u >> 4];
        b += hex[u & 15];
        fail_at(t.line, t.col, "unexpected byte " + b);
      }
      fail_at(t.line, t.col, std::string("unexpected character '") + c + "'");
    }
    t.text = std::string_view(start, static_cast<std::size_t>(p_ - start));
    return t;
  }

  void lex_number(Token& t) {
    const char* start = p_;
    bool is_float = false;
    while (p_ < end_ && is_digit(*p_)) ++p_;
    if (p_ < end_ && *p_ == '.') {
      is_float = true;
      ++p_;
      while (p_ < end_ && is_digit(*p_)) ++p_;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      is_float = true;
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ >= end_ || !is_digit(*p_)) fail_at(t.line, col_of(p_), "expected exponent digits in number, found " + found_char());
      while (p_ < end_ && is_digit(*p_)) ++p_;
    }
    if (p_ < end_ && (is_ident_char(*p_) || *p_ == '.'))
      fail_at(t.line, col_of(p_),
              "expected a delimiter after number " + show_text(std::string_view(start, p_ - start)) + ", found " + found_char());
    if (!is_float && p_ - start > 1 && *start == '0') {
      for (const char* q = start; q < p_; ++q)
        if (*q != '0') fail_at(t.line, t.col, "leading zeros in integer " + show_text(std::string_view(start, p_ - start)));
    }
    t.type = is_float ? Token::Float : Token::Int;
  }

  std::string found_char() const {
    if (p_ >= end_) return line_mode_ ? "end of line" : "end of input";
    return show_text(std::string_view(p_, 1));
  }

  void lex_string(Token& t) {
    const char quote = *p_++;
    t.type = Token::Str;
    std::string& out = t.str;
    while (true) {
      if (p_ >= end_ || *p_ == '\n' || *p_ == '\r')
        fail_at(t.line, t.col, std::string("unterminated string: expected closing ") + quote + ", found " + found_char());
      char c = *p_;
      if (c == quote) {
        ++p_;
        return;
      }
      if (c != '\\') {
        out += c;
        ++p_;
        continue;
      }
      const char* esc = p_;
      ++p_;
      if (p_ >= end_) fail_at(line_, col_of(esc), "unterminated string: backslash at end");
      char e = *p_++;
      switch (e) {
        case '\n':  // line continuation inside a string (only outside line mode)
          ++line_;
          line_start_ = p_;
          break;
        case '\r':
          if (p_ < end_ && *p_ == '\n') ++p_;
          ++line_;
          line_start_ = p_;
          break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7': {
          uint32_t cp = static_cast<uint32_t>(e - '0');
          for (int k = 0; k < 2 && p_ < end_ && *p_ >= '0' && *p_ <= '7'; ++k) cp = cp * 8 + static_cast<uint32_t>(*p_++ - '0');
          append_utf8(out, cp);
          break;
        }
        case 'x':
        case 'u':
        case 'U': {
          int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (int k = 0; k < n; ++k) {
            int h = p_ < end_ ? hex_value(*p_) : -1;
            if (h < 0)
              fail_at(line_, col_of(p_),
                      std::string("expected ") + std::to_string(n) + " hex digits after \\" + e + ", found " + found_char());
            cp = cp * 16 + static_cast<uint32_t>(h);
            ++p_;
          }
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            fail_at(line_, col_of(esc), "escape " + show_text(std::string_view(esc, p_ - esc)) + " is not a valid code point");
          append_utf8(out, cp);
          break;
        }
        case 'N': fail_at(line_, col_of(esc), "\\N{...} escapes are not supported");
        default:  // Python keeps unknown escapes as written
          out += '\\';
          out += e;
          break;
      }
    }
  }

  std::size_t call_values_ = 0;

 private:
  const char* p_;
  const char* end_;
  const std::string& source_;
  int line_;
  const char* line_start_;
  bool line_mode_;
  std::size_t* trace_values_;
  Token peeked_;
  bool has_peek_ = false;
};

// Parses "[cnt: N,] ((args...), {kwargs...})" up to the parser's end.
Call parse_call_with(Parser& ps, int line, bool require_count) {
  Call call;
  call.line = line;
  if (ps.raw_starts_with("cnt:")) {
    ps.raw_advance(4);
    Token t = ps.next();
    if (t.type != Token::Int) ps.expected("a non-negative integer count after 'cnt:'", t);
    call.count = ps.int_value(t, false);
    ps.expect_punct(',', "',' after the count");
  } else if (require_count) {
    ps.expected("'cnt:'", ps.peek());
  }
  Token open = ps.expect_punct('(', "'(' starting the call spec ((args...), {kwargs...})");
  ps.count_values(open);
  Token at = ps.peek();
  Value args = ps.parse_value(2);
  if (args.kind != Value::Kind::Tuple && args.kind != Value::Kind::List)
    ps.fail_tok(at, "expected a tuple of positional arguments, found " + kind_name(args.kind));
  call.args = std::move(args.items);
  ps.expect_punct(',', "',' after the positional arguments");
  if (!ps.peek_punct('{')) ps.expected("'{' starting the keyword arguments", ps.peek());
  Value kw = ps.parse_value(2);
  call.kwargs.reserve(kw.items.size());
  for (std::size_t i = 0; i < kw.items.size(); ++i) call.kwargs.emplace_back(std::move(kw.keys[i]), std::move(kw.items[i]));
  ps.accept_punct(',');
  ps.expect_punct(')', "')' closing the call spec");
  Token end = ps.next();
  if (end.type != Token::End) ps.expected("end of line after the call spec", end);
  return call;
}

void check_size(const std::string& text, const std::string& source) {
  if (text.size() > kMaxInputBytes)
    throw ParseError(source, 1, 1,
                     "input of " + std::to_string(text.size()) + " bytes exceeds the limit of " + std::to_string(kMaxInputBytes) +
                         " bytes");
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix; }

}  // namespace

std::vector<OperatorEntry> parse_trace(const std::string& text, const std::string& source) {
  check_size(text, source);
  std::vector<OperatorEntry> ops;
  std::size_t trace_values = 0;
  const char* data = text.data();
  const std::size_t n = text.size();
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < n) {
    ++line_no;
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = n;
    std::size_t line_end = eol;
    if (line_end > pos && data[line_end - 1] == '\r') --line_end;
    const char* line_start = data + pos;
    std::string_view line(line_start, line_end - pos);
    pos = eol + 1;

    std::size_t indent = 0;
    while (indent < line.size() && (line[indent] == ' ' || line[indent] == '\t')) ++indent;
    std::string_view body = line.substr(indent);
    if (body.empty() || body[0] == '#') continue;

    if (starts_with(body, "Operator:")) {
      std::size_t b = indent + 9;
      while (b < line.size() && (line[b] == ' ' || line[b] == '\t')) ++b;
      std::size_t e = line.size();
      while (e > b && (line[e - 1] == ' ' || line[e - 1] == '\t')) --e;
      if (b == e)
        throw ParseError(source, line_no, static_cast<int>(b) + 1, "expected an operator name after 'Operator:', found end of line");
      for (std::size_t i = b; i < e; ++i) {
        auto c = static_cast<unsigned char>(line[i]);
        if (c <= 0x20 || c >= 0x7f)
          throw ParseError(source, line_no, static_cast<int>(i) + 1,
                           "expected an operator name such as aten.add.Tensor, found " + show_text(line.substr(i, 1)) + " in it");
      }
      OperatorEntry op;
      op.name = std::string(line.substr(b, e - b));
      op.line = line_no;
      ops.push_back(std::move(op));
      continue;
    }
    if (starts_with(body, "cnt:")) {
      if (ops.empty()) throw ParseError(source, line_no, static_cast<int>(indent) + 1, "call line before any 'Operator:' line");
      Parser ps(line, source, line_no, line_start, /*line_mode=*/true, &trace_values);
      ops.back().calls.push_back(parse_call_with(ps, line_no, true));
      continue;
    }
    throw ParseError(source, line_no, static_cast<int>(indent) + 1,
                     "expected an 'Operator:' line, a 'cnt:' line, a comment or a blank line, found " + show_text(body));
  }
  return ops;
}

Call parse_call(const std::string& text, const std::string& source) {
  check_size(text, source);
  Parser ps(text, source, 1, text.data(), /*line_mode=*/false, nullptr);
  return parse_call_with(ps, 1, false);
}

}  // namespace kg::trace

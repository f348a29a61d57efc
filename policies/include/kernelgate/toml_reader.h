// Reading operator-written TOML (policy profiles, an nvrtc op's launch table): a thin layer over
// toml++ whose every error is a TomlError naming the file, line, column and the full key, so
// that a typo in a file that decides verdicts is reported where it is, never silently ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// toml++ 3.3's parser asserts (debug builds) or, under clang, tells the optimiser to assume
// (release builds: undefined behaviour) that a table header starts with a key character; a line
// such as "[=x]" breaks that (found by fuzzing policy files). The parser's own error path right
// after the check reports it correctly, so the assert-assume is made inert for every user.
#include <toml++/impl/preprocessor.h>
#undef TOML_ASSERT_ASSUME
#define TOML_ASSERT_ASSUME(expr) static_assert(true)
#include <toml++/toml.h>

namespace kg {

struct TomlError : std::runtime_error {
  enum class Kind {
    Syntax,  // not TOML; `key` is the key being written there, when one can be told
    Value,   // TOML, but a key or value the reader does not accept
  };
  // `line` and `column` are 1-based, 0 when unknown. what() is
  // "file:line:column: key 'KEY': message" for a Value error (no key part when `key` is empty) and
  // "file:line:column: TOML syntax error: message (at key 'KEY')" for a Syntax error.
  TomlError(Kind kind, std::string file, int line, int column, std::string key, std::string message);

  Kind kind;
  std::string file;
  int line, column;
  std::string key;
  std::string message;
};

// Parses a document of at most `max_bytes`; `file` names it in errors. Throws TomlError.
toml::table parse_toml(const std::string& text, const std::string& file, std::size_t max_bytes);

// A dotted key path as the user writes it: toml_key_path("op", "mm.default") is op."mm.default".
std::string toml_key_path(const std::string& path, std::string_view key);
// " (did you mean 'x'?)" when one of `candidates` is close to `got` (an edit or two, or `got` is
// a prefix of at least 3 characters); "" otherwise.
std::string did_you_mean(std::string_view got, const std::vector<std::string>& candidates);
// "a, b, c"
std::string comma_list(const std::vector<std::string>& items);
// A number in its shortest exact decimal form, integers below 1e6 written out: 3600, 1e+09, nan.
std::string shortest_decimal(double v);

// The accepted values of a number: [lo, hi], or (lo, hi] when `lo_open`.
struct NumberRange {
  double lo;
  bool lo_open;  // lo itself is refused
  double hi;
  const char* why;  // said when a value falls outside; may be null
};
// "0 < x <= 3600", as errors and the docs write a range.
std::string describe(const NumberRange& r);

// Typed getters over one file's nodes: each returns the value or throws TomlError at the node.
class TomlReader {
 public:
  explicit TomlReader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  [[noreturn]] void fail(const toml::source_region& at, const std::string& key, const std::string& message) const;
  [[noreturn]] void fail(const toml::node& at, const std::string& key, const std::string& message) const {
    fail(at.source(), key, message);
  }

  // Every key of `t` (at `path`; "" for the root) must be one of `allowed`.
  void only_keys(const toml::table& t, const std::string& path, const std::vector<std::string>& allowed) const;

  // `hint` is appended to the type error ("; write { atol = ..., rtol = ... }").
  const toml::table& table(const toml::node& n, const std::string& key, const std::string& hint = "") const;
  // `of` says what the elements are (" of strings"): "expected an array of strings, got ...".
  const toml::array& array(const toml::node& n, const std::string& key, const std::string& of = "") const;
  std::string string(const toml::node& n, const std::string& key) const;
  bool boolean(const toml::node& n, const std::string& key) const;
  // An integer within [lo, hi].
  int64_t integer(const toml::node& n, const std::string& key, int64_t lo, int64_t hi) const;
  // A number: a TOML integer is accepted where a float is meant (`compile_time_s = 60`).
  double number(const toml::node& n, const std::string& key) const;
  // A finite number within `r`.
  double number(const toml::node& n, const std::string& key, const NumberRange& r) const;

 private:
  std::string file_;
};

}  // namespace kg

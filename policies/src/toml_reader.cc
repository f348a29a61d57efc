// The TOML reader's errors and typed getters (toml_reader.h).
#include "kernelgate/toml_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <utility>

namespace kg {
namespace {

std::string where(const std::string& file, int line, int column) {
  std::string s = file;
  if (line) s += ":" + std::to_string(line);
  if (line && column) s += ":" + std::to_string(column);
  return s;
}

std::string error_text(TomlError::Kind kind, const std::string& file, int line, int column, const std::string& key,
                       const std::string& message) {
  std::string s = where(file, line, column) + ": ";
  if (kind == TomlError::Kind::Syntax) return s + "TOML syntax error: " + message + (key.empty() ? "" : " (at key '" + key + "')");
  if (!key.empty()) s += "key '" + key + "': ";
  return s + message;
}

// Edit distance counting an adjacent transposition as one edit ("f23" is one edit from "f32").
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

const char* type_name(toml::node_type t) {
  switch (t) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

bool is_bare(std::string_view k) {
  if (k.empty()) return false;
  for (unsigned char c : k)
    if (!(std::isalnum(c) || c == '_' || c == '-')) return false;
  return true;
}

std::string trimmed_right(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

// For a syntax error, the key the user was writing: the last [table] header before the error
// line plus the key on that line, when the line has one.
std::string key_at(const std::string& text, size_t line) {
  std::istringstream in(text);
  std::string l, table, key;
  for (size_t i = 1; i <= line && std::getline(in, l); ++i) {
    size_t s = l.find_first_not_of(" \t");
    if (s == std::string::npos) continue;
    if (l[s] == '[') {
      size_t e = l.find(']', s);
      std::string h = l.substr(s, e == std::string::npos ? std::string::npos : e - s);
      h.erase(0, h.find_first_not_of("[ \t"));
      h = trimmed_right(h);
      if (i < line) table = h;
      else key = h;
      continue;
    }
    if (i == line) {
      size_t eq = l.find('=', s);
      if (eq != std::string::npos) {
        key = trimmed_right(l.substr(s, eq - s));
        if (!table.empty()) key = table + "." + key;
      }
    }
  }
  if (!key.empty()) return key;
  return table;
}

}  // namespace

TomlError::TomlError(Kind kind, std::string file, int line, int column, std::string key, std::string message)
    : std::runtime_error(error_text(kind, file, line, column, key, message)),
      kind(kind),
      file(std::move(file)),
      line(line),
      column(column),
      key(std::move(key)),
      message(std::move(message)) {}

toml::table parse_toml(const std::string& text, const std::string& file, std::size_t max_bytes) {
  if (text.size() > max_bytes)
    throw TomlError(TomlError::Kind::Value, file, 0, 0, "",
                    "the document is " + std::to_string(text.size()) + " bytes, over the limit of " + std::to_string(max_bytes) + " bytes");
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw TomlError(TomlError::Kind::Syntax, file, static_cast<int>(at.line), static_cast<int>(at.column),
                    at.line ? key_at(text, at.line) : "", std::string(e.description()));
  }
}

std::string toml_key_path(const std::string& path, std::string_view key) {
  std::string part = is_bare(key) ? std::string(key) : "\"" + std::string(key) + "\"";
  return path.empty() ? part : path + "." + part;
}

std::string did_you_mean(std::string_view got, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (const auto& c : candidates) {
    size_t d = edit_distance(got, c);
    if (d < best_d) best_d = d, best = &c;
  }
  if (best && best_d <= std::max<size_t>(2, best->size() / 3)) return " (did you mean '" + *best + "'?)";
  // A shortened name: "fallback" for "fallback_to_torch".
  if (got.size() >= 3)
    for (const auto& c : candidates)
      if (c.compare(0, got.size(), got) == 0) return " (did you mean '" + c + "'?)";
  return "";
}

std::string comma_list(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s;
}

std::string shortest_decimal(double v) {
  if (std::isfinite(v) && std::fabs(v) < 1e6 && v == std::floor(v)) return std::to_string(static_cast<int64_t>(v));
  for (int digits = 1; digits <= 17; ++digits) {
    std::ostringstream o;
    o.precision(digits);
    o << v;
    if (!std::isfinite(v) || std::strtod(o.str().c_str(), nullptr) == v) return o.str();
  }
  return std::to_string(v);
}

std::string describe(const NumberRange& r) {
  return shortest_decimal(r.lo) + (r.lo_open ? " < x <= " : " <= x <= ") + shortest_decimal(r.hi);
}

void TomlReader::fail(const toml::source_region& at, const std::string& key, const std::string& message) const {
  throw TomlError(TomlError::Kind::Value, file_, static_cast<int>(at.begin.line), static_cast<int>(at.begin.column), key, message);
}

void TomlReader::only_keys(const toml::table& t, const std::string& path, const std::vector<std::string>& allowed) const {
  for (auto&& [k, v] : t) {
    if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end())
      fail(k.source(), toml_key_path(path, k.str()),
           "unknown key" + did_you_mean(k.str(), allowed) + "; known keys" + (path.empty() ? "" : " in [" + path + "]") + ": " +
               comma_list(allowed));
  }
}

const toml::table& TomlReader::table(const toml::node& n, const std::string& key, const std::string& hint) const {
  if (auto t = n.as_table()) return *t;
  fail(n, key, std::string("expected a table, got ") + type_name(n.type()) + hint);
}

const toml::array& TomlReader::array(const toml::node& n, const std::string& key, const std::string& of) const {
  if (auto a = n.as_array()) return *a;
  fail(n, key, "expected an array" + of + ", got " + type_name(n.type()));
}

std::string TomlReader::string(const toml::node& n, const std::string& key) const {
  if (auto s = n.as_string()) return s->get();
  fail(n, key, std::string("expected a string, got ") + type_name(n.type()));
}

bool TomlReader::boolean(const toml::node& n, const std::string& key) const {
  if (auto b = n.as_boolean()) return b->get();
  fail(n, key, std::string("expected a boolean (true or false), got ") + type_name(n.type()));
}

int64_t TomlReader::integer(const toml::node& n, const std::string& key, int64_t lo, int64_t hi) const {
  auto i = n.as_integer();
  if (!i) fail(n, key, std::string("expected an integer, got ") + type_name(n.type()));
  const int64_t v = i->get();
  if (v < lo || v > hi) fail(n, key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + std::to_string(v));
  return v;
}

double TomlReader::number(const toml::node& n, const std::string& key) const {
  if (auto f = n.as_floating_point()) return f->get();
  if (auto i = n.as_integer()) return static_cast<double>(i->get());
  fail(n, key, std::string("expected a number, got ") + type_name(n.type()));
}

double TomlReader::number(const toml::node& n, const std::string& key, const NumberRange& r) const {
  const double v = number(n, key);
  const bool ok = std::isfinite(v) && (r.lo_open ? v > r.lo : v >= r.lo) && v <= r.hi;
  if (!ok) {
    std::string m = shortest_decimal(v) + " is out of range (" + describe(r) + ")";
    if (!std::isfinite(v)) m += ": must be a finite number";
    else if (r.why) m += std::string(": ") + r.why;
    fail(n, key, m);
  }
  return v;
}

}  // namespace kg

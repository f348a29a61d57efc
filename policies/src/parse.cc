// TOML text -> Policy. The one place the schema of docs/policies.md is enforced: every key is
// known, every value has its type and range, and every error names the file, line, column and
// the full key, because a profile decides verdicts and a silently ignored typo would change them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string_view>

// toml++ 3.3's parser asserts (debug builds) or, under clang, tells the optimiser to assume
// (release builds: undefined behaviour) that a table header starts with a key character; a
// profile line such as "[=x]" breaks that (found by PolicyFuzz). The parser's own error path
// right after the check reports it correctly, so the assert-assume is made inert here.
#include <toml++/impl/preprocessor.h>
#undef TOML_ASSERT_ASSUME
#define TOML_ASSERT_ASSUME(expr) static_assert(true)
#include <toml++/toml.h>

#include "policy_internal.h"

namespace kg::policy::detail {
namespace {

// ---------------------------------------------------------------------------------------------
// Error text helpers

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

// " (did you mean 'x'?)" when one candidate is close enough to be the intended spelling.
std::string suggestion(std::string_view got, const std::vector<std::string>& candidates) {
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

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

// A number in its shortest exact decimal form, small integers written out: 3600, 16777216, 1e+09, nan.
std::string shown(double v) {
  if (std::isfinite(v) && std::fabs(v) < 1e6 && v == std::floor(v)) return std::to_string(static_cast<int64_t>(v));
  for (int digits = 1; digits <= 17; ++digits) {
    std::ostringstream o;
    o.precision(digits);
    o << v;
    if (!std::isfinite(v) || std::strtod(o.str().c_str(), nullptr) == v) return o.str();
  }
  return std::to_string(v);
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

// A dotted key path as the user would write it: op."mm.default".f32.atol
std::string child(const std::string& path, std::string_view k) {
  std::string part = is_bare(k) ? std::string(k) : "\"" + std::string(k) + "\"";
  return path.empty() ? part : path + "." + part;
}

// ---------------------------------------------------------------------------------------------
// The accepted range of each numeric key (docs/policies.md lists them).

struct Range {
  double lo;
  bool lo_open;  // lo itself is refused
  double hi;
  const char* why;  // said when a value falls outside
};

// Atol and rtol are compared as doubles only; past 1e9 a tolerance passes every finite output.
constexpr Range kToleranceRange{0, false, 1e9, "a tolerance is a distance, at most 1e9"};
// Times: the sandbox turns a wall limit into a nanosecond deadline and a CPU limit into an
// rlimit; an hour per build or per call keeps every product of them (timing budgets of
// run_call_time_s x calls) far inside int64 nanoseconds.
constexpr Range kTimeLimitRange{0, true, 3600, "a limit of zero would fail every submission; at most an hour"};
// MiB: at least 1 (a fraction truncates to 0 MiB, which would mean no limit at all), at most
// 16 TiB (the byte count, MiB << 20, stays far inside 64 bits).
constexpr Range kMemoryLimitRange{1, false, double(int64_t{1} << 24), "at least 1 MiB, at most 16 TiB (16777216 MiB)"};
constexpr Range kMinSecondsRange{0, false, 3600, "a duration, at most an hour"};

// ---------------------------------------------------------------------------------------------
// The reader: one per file, carrying the file's name for every error.

class Reader {
 public:
  Reader(const std::string& source, std::vector<std::string>& chain) : source_(source), chain_(chain) {}

  [[noreturn]] void fail(const toml::source_region& at, const std::string& key, const std::string& what) const {
    std::ostringstream m;
    m << source_;
    if (at.begin.line) m << ":" << at.begin.line;
    if (at.begin.line && at.begin.column) m << ":" << at.begin.column;
    m << ": key '" << key << "': " << what;
    throw PolicyError(m.str());
  }

  // Every key of `t` must be one of `allowed`: typos are errors, never silently ignored.
  void only_keys(const toml::table& t, const std::string& path, const std::vector<std::string>& allowed) const {
    for (auto&& [k, v] : t) {
      if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end())
        fail(k.source(), child(path, k.str()),
             "unknown key" + suggestion(k.str(), allowed) + "; known keys" +
                 (path.empty() ? "" : " in [" + path + "]") + ": " + joined(allowed));
    }
  }

  const toml::table& table(const toml::node& n, const std::string& key, const char* hint = "") const {
    if (auto t = n.as_table()) return *t;
    fail(n.source(), key, std::string("expected a table, got ") + type_name(n.type()) + hint);
  }

  std::string string(const toml::node& n, const std::string& key) const {
    if (auto s = n.as_string()) return s->get();
    fail(n.source(), key, std::string("expected a string, got ") + type_name(n.type()));
  }

  bool boolean(const toml::node& n, const std::string& key) const {
    if (auto b = n.as_boolean()) return b->get();
    fail(n.source(), key, std::string("expected a boolean (true or false), got ") + type_name(n.type()));
  }

  int integer(const toml::node& n, const std::string& key, int64_t lo, int64_t hi) const {
    auto i = n.as_integer();
    if (!i) fail(n.source(), key, std::string("expected an integer, got ") + type_name(n.type()));
    int64_t v = i->get();
    if (v < lo || v > hi)
      fail(n.source(), key,
           "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + std::to_string(v));
    return static_cast<int>(v);
  }

  // A number: TOML integers are accepted where a float is meant (`compile_time_s = 60`).
  double number(const toml::node& n, const std::string& key) const {
    if (auto f = n.as_floating_point()) return f->get();
    if (auto i = n.as_integer()) return static_cast<double>(i->get());
    fail(n.source(), key, std::string("expected a number, got ") + type_name(n.type()));
  }

  // A number within [lo, hi] ((lo, hi] when `lo_open`): every value the schema accepts must be
  // one the children's limits, timers and byte counts can hold, so a setting that validates can
  // never turn into an overflowed (zero or negative) limit further down.
  double in_range(const toml::node& n, const std::string& key, const Range& r) const {
    const double v = number(n, key);
    const bool ok = std::isfinite(v) && (r.lo_open ? v > r.lo : v >= r.lo) && v <= r.hi;
    if (!ok) {
      std::ostringstream m;
      m << shown(v) << " is out of range (" << shown(r.lo) << (r.lo_open ? " < x <= " : " <= x <= ") << shown(r.hi) << ")";
      if (!std::isfinite(v)) m << ": must be a finite number";
      else if (r.why) m << ": " << r.why;
      fail(n.source(), key, m.str());
    }
    return v;
  }

  std::string dtype(const toml::key& k, const std::string& key) const {
    const std::string d(k.str());
    const auto& f = float_dtypes();
    if (std::find(f.begin(), f.end(), d) != f.end()) return d;
    static const std::vector<std::string> exact = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "b8", "bool"};
    if (std::find(exact.begin(), exact.end(), d) != exact.end())
      fail(k.source(), key, "dtype '" + d + "' is an integer or bool type, which is always compared exactly; "
                                           "tolerances exist only for " + joined(f));
    // Long PyTorch names map to the short ones this schema uses.
    static const std::vector<std::pair<std::string, std::string>> longnames = {
        {"float16", "f16"}, {"half", "f16"},     {"bfloat16", "bf16"},  {"float32", "f32"},   {"float", "f32"},
        {"float64", "f64"}, {"double", "f64"},   {"complex32", "c32"},  {"chalf", "c32"},     {"complex64", "c64"},
        {"cfloat", "c64"},  {"complex128", "c128"}, {"cdouble", "c128"}};
    std::string hint;
    for (const auto& [l, s] : longnames)
      if (d == l || d == "torch." + l) hint = " (did you mean '" + s + "'?)";
    if (hint.empty()) hint = suggestion(d, f);
    fail(k.source(), key, "unknown dtype '" + d + "'" + hint + "; tolerances are set for " + joined(f));
  }

  // {atol, rtol}, each optional: a missing one keeps `t`'s value (the inherited setting).
  void tolerance(const toml::node& n, const std::string& key, Tolerance& t) const {
    const auto& tbl = table(n, key, "; write { atol = ..., rtol = ... }");
    only_keys(tbl, key, {"atol", "rtol"});
    if (auto a = tbl.get("atol")) t.atol = in_range(*a, child(key, "atol"), kToleranceRange);
    if (auto r = tbl.get("rtol")) t.rtol = in_range(*r, child(key, "rtol"), kToleranceRange);
  }

  Policy read(const toml::table& root);

 private:
  void read_tolerances(const toml::node& n, Policy& p) const;
  void read_ops(const toml::node& n, Policy& p) const;
  void read_rules(const toml::node& n, Policy& p) const;
  void read_libraries(const toml::node& n, Policy& p) const;
  void read_trials(const toml::node& n, Policy& p) const;
  void read_timing(const toml::node& n, Policy& p) const;
  void read_limits(const toml::node& n, Policy& p) const;

  std::string source_;
  std::vector<std::string>& chain_;
};

void Reader::read_tolerances(const toml::node& n, Policy& p) const {
  const auto& tbl = table(n, "tolerance");
  for (auto&& [k, v] : tbl) {
    const std::string key = child("tolerance", k.str());
    const std::string d = dtype(k, key);
    tolerance(v, key, p.tolerances[d]);
  }
}

bool valid_op_name(std::string_view op) {
  // name.overload, both parts identifiers: "_softmax.default", "add_.Tensor", "sum.dim_IntList".
  auto dot = op.find('.');
  if (dot == std::string_view::npos || op.find('.', dot + 1) != std::string_view::npos) return false;
  auto ident = [](std::string_view s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    for (unsigned char c : s)
      if (!(std::isalnum(c) || c == '_')) return false;
    return true;
  };
  return ident(op.substr(0, dot)) && ident(op.substr(dot + 1));
}

void Reader::read_ops(const toml::node& n, Policy& p) const {
  const auto& tbl = table(n, "op");
  for (auto&& [opk, opv] : tbl) {
    const std::string op(opk.str());
    const std::string opkey = child("op", op);
    if (op.rfind("aten.", 0) == 0 || op.rfind("aten::", 0) == 0)
      fail(opk.source(), opkey,
           "write the overload without the namespace: \"" + op.substr(op[4] == ':' ? 6 : 5) + "\"");
    if (!valid_op_name(op))
      fail(opk.source(), opkey,
           "not an op overload name; write name.overload as the trace files do, e.g. \"sum.default\", "
           "\"add.Tensor\", \"_softmax.default\"");
    const auto& per_dtype = table(opv, opkey);
    auto& out = p.op_tolerances[op];
    for (auto&& [dk, dv] : per_dtype) {
      const std::string key = child(opkey, dk.str());
      if (dk.str() == "atol" || dk.str() == "rtol")
        fail(dk.source(), key, "op overrides are per dtype: write [" + opkey + ".f32] with atol/rtol under it");
      const std::string d = dtype(dk, key);
      // Unset fields inherit the base profile's override for this op, else the dtype's setting.
      auto it = out.find(d);
      Tolerance t = it != out.end() ? it->second : p.tolerance_for("", d);
      tolerance(dv, key, t);
      out[d] = t;
    }
  }
}

void Reader::read_rules(const toml::node& n, Policy& p) const {
  const auto& tbl = table(n, "rules");
  for (auto&& [k, v] : tbl) {
    const std::string key = child("rules", k.str());
    const auto& known = known_rules();
    if (std::find(known.begin(), known.end(), k.str()) == known.end())
      fail(k.source(), key,
           "unknown rule id '" + std::string(k.str()) + "'" + suggestion(k.str(), known) +
               "; rule ids (THREATS.md section B): " + joined(known));
    const std::string a = string(v, key);
    Action act;
    if (a == "reject") act = Action::Reject;
    else if (a == "flag") act = Action::Flag;
    else if (a == "off") act = Action::Off;
    else fail(v.source(), key, "unknown action \"" + a + "\"; expected \"reject\", \"flag\" or \"off\"");
    p.rules[std::string(k.str())] = act;
  }
}

void Reader::read_libraries(const toml::node& n, Policy& p) const {
  const auto& tbl = table(n, "libraries");
  only_keys(tbl, "libraries", {"allowed"});
  auto a = tbl.get("allowed");
  if (!a) return;
  auto arr = a->as_array();
  if (!arr) fail(a->source(), "libraries.allowed", std::string("expected an array of strings, got ") + type_name(a->type()));
  std::vector<std::string> libs;
  for (size_t i = 0; i < arr->size(); ++i) {
    const auto& e = *arr->get(i);
    const std::string key = "libraries.allowed[" + std::to_string(i) + "]";
    std::string lib = string(e, key);
    const auto& known = known_libraries();
    if (std::find(known.begin(), known.end(), lib) == known.end())
      fail(e.source(), key, "unknown library \"" + lib + "\"" + suggestion(lib, known) + "; known: " + joined(known));
    if (std::find(libs.begin(), libs.end(), lib) != libs.end())
      fail(e.source(), key, "library \"" + lib + "\" listed twice");
    libs.push_back(lib);
  }
  p.allowed_libraries = libs;  // replaces the base profile's list: what is allowed is stated whole
}

void Reader::read_trials(const toml::node& n, Policy& p) const {
  const auto& tbl = table(n, "trials");
  only_keys(tbl, "trials", {"correctness"});
  if (auto c = tbl.get("correctness")) p.correctness_trials = integer(*c, "trials.correctness", 1, 1000);
}

void Reader::read_timing(const toml::node& n, Policy& p) const {
  const auto& tbl = table(n, "timing");
  only_keys(tbl, "timing", {"enabled", "warmup", "min_reps", "max_reps", "min_seconds", "rotation_mib"});
  if (auto v = tbl.get("enabled")) p.timing = boolean(*v, "timing.enabled");
  if (auto v = tbl.get("warmup")) p.timing_warmup = integer(*v, "timing.warmup", 0, 1000000);
  if (auto v = tbl.get("min_reps")) p.timing_min_reps = integer(*v, "timing.min_reps", 1, 10000000);
  if (auto v = tbl.get("max_reps")) p.timing_max_reps = integer(*v, "timing.max_reps", 1, 10000000);
  if (auto v = tbl.get("min_seconds")) p.timing_min_seconds = in_range(*v, "timing.min_seconds", kMinSecondsRange);
  if (auto v = tbl.get("rotation_mib")) p.timing_rotation_mib = integer(*v, "timing.rotation_mib", 0, 1 << 20);
  if (p.timing_max_reps < p.timing_min_reps) {
    const toml::node* at = tbl.get("max_reps") ? tbl.get("max_reps") : tbl.get("min_reps");
    fail(at->source(), at == tbl.get("max_reps") ? "timing.max_reps" : "timing.min_reps",
         "max_reps (" + std::to_string(p.timing_max_reps) + ") is below min_reps (" +
             std::to_string(p.timing_min_reps) + ")");
  }
}

void Reader::read_limits(const toml::node& n, Policy& p) const {
  const auto& tbl = table(n, "limits");
  only_keys(tbl, "limits", {"compile_time_s", "compile_memory_mb", "run_call_time_s", "run_memory_mb", "cache_artifact_mb"});
  if (auto v = tbl.get("compile_time_s")) p.compile_time_s = in_range(*v, "limits.compile_time_s", kTimeLimitRange);
  if (auto v = tbl.get("compile_memory_mb")) p.compile_memory_mb = in_range(*v, "limits.compile_memory_mb", kMemoryLimitRange);
  if (auto v = tbl.get("run_call_time_s")) p.run_call_time_s = in_range(*v, "limits.run_call_time_s", kTimeLimitRange);
  if (auto v = tbl.get("run_memory_mb")) p.run_memory_mb = in_range(*v, "limits.run_memory_mb", kMemoryLimitRange);
  if (auto v = tbl.get("cache_artifact_mb")) p.cache_artifact_mb = integer(*v, "limits.cache_artifact_mb", 1, 1 << 20);
}

Policy Reader::read(const toml::table& root) {
  only_keys(root, "", {"base", "name", "description", "tolerance", "op", "rules", "libraries", "trials", "timing", "limits"});

  Policy p;
  if (auto b = root.get("base")) {
    // Start from another profile's effective settings; this file states only what differs.
    const std::string base = string(*b, "base");
    try {
      p = detail::load(base, source_, chain_);
    } catch (const PolicyError& e) {
      fail(b->source(), "base", std::string("cannot use base profile \"") + base + "\": " + e.what());
    }
  } else {
    // Start from the built-in defaults, written out so the struct holds the effective settings.
    for (const auto& d : float_dtypes()) p.tolerances[d] = builtin_tolerance(d);
    for (const auto& r : known_rules()) p.rules[r] = Action::Reject;
  }
  p.source = source_;
  // Name and description describe this file, never inherited from a base.
  p.name = stem(source_);
  p.description.clear();
  if (auto v = root.get("name")) {
    p.name = string(*v, "name");
    if (p.name.empty()) fail(v->source(), "name", "must not be empty");
  }
  if (auto v = root.get("description")) p.description = string(*v, "description");

  // [tolerance] before [op]: an op override's unset field inherits the dtype's setting.
  if (auto v = root.get("tolerance")) read_tolerances(*v, p);
  if (auto v = root.get("op")) read_ops(*v, p);
  if (auto v = root.get("rules")) read_rules(*v, p);
  if (auto v = root.get("libraries")) read_libraries(*v, p);
  if (auto v = root.get("trials")) read_trials(*v, p);
  if (auto v = root.get("timing")) read_timing(*v, p);
  if (auto v = root.get("limits")) read_limits(*v, p);
  if (p.name.empty()) throw PolicyError(source_ + ": key 'name': missing, and the source has no file name to use");
  return p;
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
      while (!h.empty() && (h.back() == ' ' || h.back() == '\t')) h.pop_back();
      if (i < line) table = h;
      else key = h;
      continue;
    }
    if (i == line) {
      size_t eq = l.find('=', s);
      if (eq != std::string::npos) {
        key = l.substr(s, eq - s);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
        if (!table.empty()) key = table + "." + key;
      }
    }
  }
  if (!key.empty()) return key;
  return table;
}

}  // namespace

std::string stem(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string ext = ".toml";
  if (base.size() > ext.size() && base.compare(base.size() - ext.size(), ext.size(), ext) == 0)
    base.resize(base.size() - ext.size());
  return base;
}

Policy parse(const std::string& text, const std::string& source, std::vector<std::string>& chain) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    std::ostringstream m;
    m << source;
    if (at.line) m << ":" << at.line;
    if (at.line && at.column) m << ":" << at.column;
    m << ": TOML syntax error: " << e.description();
    if (at.line) {
      std::string key = key_at(text, at.line);
      if (!key.empty()) m << " (at key '" << key << "')";
    }
    throw PolicyError(m.str());
  }
  Reader r(source, chain);
  return r.read(root);
}

}  // namespace kg::policy::detail

namespace kg::policy {

Policy parse(const std::string& text, const std::string& source) {
  std::vector<std::string> chain;
  return detail::parse(text, source, chain);
}

}  // namespace kg::policy

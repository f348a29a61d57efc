// Policy -> TOML text: the effective settings, in the schema parse.cc reads (docs/policies.md).
// Written by hand rather than with toml++'s formatter so that the output keeps the schema's
// order, carries a comment per section, and prints every number in its shortest form that
// reads back to the same double (parse(to_toml()) == the original, bit for bit).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "kernelgate/policy.h"

namespace kg::policy {
namespace {

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  // Shortest form that reads back to the same double; small and huge values in scientific
  // notation with a bare exponent ("1e-5", not "1e-05" or "0.00001"), as a person writes them.
  const double mag = std::fabs(v);
  const bool sci = v != 0 && (mag < 1e-2 || mag >= 1e7);
  auto r = sci ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific)
               : std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (size_t e = s.find('e'); e != std::string::npos) {
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    const bool neg = exp[0] == '-';
    if (exp[0] == '-' || exp[0] == '+') exp.erase(0, 1);
    exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
    s = mant + "e" + (neg ? "-" : "") + exp;
  }
  // TOML tells floats from integers by '.', 'e' or 'E'; "60" would read back as an integer.
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// A key as TOML needs it: bare when it is only [A-Za-z0-9_-], quoted otherwise.
std::string key(const std::string& k) {
  bool bare = !k.empty();
  for (unsigned char c : k) bare = bare && (std::isalnum(c) || c == '_' || c == '-');
  return bare ? k : quoted(k);
}

std::string tolerance(const Tolerance& t) {
  return "{ atol = " + number(t.atol) + ", rtol = " + number(t.rtol) + " }";
}

}  // namespace

std::string Policy::to_toml() const {
  std::ostringstream o;
  o << "# kernelgate policy " << quoted(name) << ": effective settings";
  if (!source.empty()) o << ", read from " << source;
  o << "\n# Schema and meaning of every key: docs/policies.md\n\n";
  // An unnamed Policy (built in code) leaves the key out: the reader names it after its source.
  if (!name.empty()) o << "name = " << quoted(name) << "\n";
  o << "description = " << quoted(description) << "\n";

  // Every float dtype, listed or not, so the reader sees what each one is judged with.
  o << "\n# |candidate - reference| <= atol + rtol * |reference|, per dtype\n[tolerance]\n";
  std::map<std::string, Tolerance> dtypes = tolerances;
  for (const auto& d : float_dtypes()) dtypes.emplace(d, tolerance_for("", d));
  for (const auto& d : float_dtypes()) o << key(d) << " = " << tolerance(dtypes[d]) << "\n";
  for (const auto& [d, t] : dtypes) {
    bool listed = false;
    for (const auto& f : float_dtypes()) listed = listed || f == d;
    if (!listed) o << key(d) << " = " << tolerance(t) << "\n";
  }

  if (!op_tolerances.empty()) o << "\n# per-op overrides: op overload -> dtype -> tolerance\n";
  for (const auto& [op, per_dtype] : op_tolerances) {
    o << "[op." << key(op) << "]\n";
    for (const auto& d : float_dtypes())
      if (auto t = per_dtype.find(d); t != per_dtype.end()) o << key(d) << " = " << tolerance(t->second) << "\n";
    for (const auto& [d, t] : per_dtype)
      if (std::find(float_dtypes().begin(), float_dtypes().end(), d) == float_dtypes().end())
        o << key(d) << " = " << tolerance(t) << "\n";
  }

  o << "\n# rule id -> \"reject\" | \"flag\" | \"off\"\n[rules]\n";
  for (const auto& r : known_rules()) o << key(r) << " = " << quoted(action_name(action_for(r))) << "\n";
  for (const auto& [r, a] : rules) {
    bool known = false;
    for (const auto& k : known_rules()) known = known || k == r;
    if (!known) o << key(r) << " = " << quoted(action_name(a)) << "\n";
  }

  o << "\n[libraries]\nallowed = [";
  for (size_t i = 0; i < allowed_libraries.size(); ++i) o << (i ? ", " : "") << quoted(allowed_libraries[i]);
  o << "]\n";

  o << "\n[trials]\ncorrectness = " << correctness_trials << "\n";

  o << "\n[timing]\n"
    << "enabled = " << (timing ? "true" : "false") << "\n"
    << "warmup = " << timing_warmup << "\n"
    << "min_reps = " << timing_min_reps << "\n"
    << "max_reps = " << timing_max_reps << "\n"
    << "min_seconds = " << number(timing_min_seconds) << "\n"
    << "rotation_mib = " << timing_rotation_mib << "\n";

  o << "\n[limits]\n"
    << "compile_time_s = " << number(compile_time_s) << "\n"
    << "compile_memory_mb = " << number(compile_memory_mb) << "\n"
    << "run_call_time_s = " << number(run_call_time_s) << "\n"
    << "run_memory_mb = " << number(run_memory_mb) << "\n"
    << "cache_artifact_mb = " << cache_artifact_mb << "\n";
  return o.str();
}

}  // namespace kg::policy

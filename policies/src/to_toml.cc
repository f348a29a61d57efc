// Policy -> TOML text: the effective settings, key by key as the schema table (policy_schema.h)
// lists them, and the non-scalar keys' writers. Written by hand rather than with toml++'s
// formatter so that the output keeps the schema's order, carries a comment per section, and
// prints every number in its shortest form that reads back to the same double
// (parse(to_toml()) == the original, bit for bit).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

#include "kernelgate/policy.h"
#include "policy_schema.h"

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
  auto r = sci ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific) : std::to_chars(buf, buf + sizeof buf, v);
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
  const auto& fields = schema::tolerance_fields();
  std::string s = "{ ";
  for (size_t i = 0; i < fields.size(); ++i) s += (i ? ", " : "") + std::string(fields[i].key) + " = " + number(t.*fields[i].member);
  return s + " }";
}

bool is_float_dtype(const std::string& d) { return std::find(float_dtypes().begin(), float_dtypes().end(), d) != float_dtypes().end(); }

// Every float dtype first, in float_dtypes()'s order, then any other listed name.
void write_per_dtype(const std::map<std::string, Tolerance>& per_dtype, std::string& out) {
  for (const auto& d : float_dtypes())
    if (auto t = per_dtype.find(d); t != per_dtype.end()) out += key(d) + " = " + tolerance(t->second) + "\n";
  for (const auto& [d, t] : per_dtype)
    if (!is_float_dtype(d)) out += key(d) + " = " + tolerance(t) + "\n";
}

}  // namespace

namespace schema {

// An unnamed Policy (built in code) leaves the key out: the reader names it after its source.
void write_name(const Policy& p, std::string& out) {
  if (!p.name.empty()) out += "name = " + quoted(p.name) + "\n";
}

// Every float dtype, listed or not, so the reader sees what each one is judged with.
void write_tolerances(const Policy& p, std::string& out) {
  out += "\n# |candidate - reference| <= atol + rtol * |reference|, per dtype\n[tolerance]\n";
  std::map<std::string, Tolerance> dtypes = p.tolerances;
  for (const auto& d : float_dtypes()) dtypes.emplace(d, p.tolerance_for("", d));
  write_per_dtype(dtypes, out);
}

void write_op_tolerances(const Policy& p, std::string& out) {
  if (!p.op_tolerances.empty()) out += "\n# per-op overrides: op overload -> dtype -> tolerance\n";
  for (const auto& [op, per_dtype] : p.op_tolerances) {
    out += "[op." + key(op) + "]\n";
    write_per_dtype(per_dtype, out);
  }
}

// Every rule the build knows, listed or not, then any other listed id.
void write_rules(const Policy& p, std::string& out) {
  out += "\n# rule id -> \"reject\" | \"flag\" | \"off\"\n[rules]\n";
  for (const auto& r : known_rules()) out += key(r) + " = " + quoted(action_name(p.action_for(r))) + "\n";
  for (const auto& [r, a] : p.rules)
    if (std::find(known_rules().begin(), known_rules().end(), r) == known_rules().end())
      out += key(r) + " = " + quoted(action_name(a)) + "\n";
}

void write_reward_preset(const Policy& p, std::string& out) { out += "preset = " + quoted(p.reward_preset) + "\n"; }

void write_allowed_libraries(const Policy& p, std::string& out) {
  out += "allowed = [";
  for (size_t i = 0; i < p.allowed_libraries.size(); ++i) out += (i ? ", " : "") + quoted(p.allowed_libraries[i]);
  out += "]\n";
}

}  // namespace schema

namespace {

using schema::Field;
using schema::Type;

void write_field(const Field& f, const Policy& p, std::string& out) {
  std::string value;
  switch (f.type) {
    case Type::String: value = quoted(p.*std::get<std::string Policy::*>(f.member)); break;
    case Type::Boolean: value = p.*std::get<bool Policy::*>(f.member) ? "true" : "false"; break;
    case Type::Integer: value = std::to_string(p.*std::get<int Policy::*>(f.member)); break;
    case Type::Number: value = number(p.*std::get<double Policy::*>(f.member)); break;
    case Type::Custom:
    case Type::Map: return f.write(p, out);
    case Type::Start:  // the base is resolved: the output is the effective settings
    case Type::Check: return;
  }
  out += key(f.key) + " = " + value + "\n";
}

// The fields [first, last) of one section (or the top level): a Map writes its own headers.
void write_section(const Field* first, const Field* last, const Policy& p, std::string& out) {
  if (*first->section && first->type != Type::Map) out += "\n[" + std::string(first->section) + "]\n";
  for (const Field* f = first; f != last; ++f) write_field(*f, p, out);
}

}  // namespace

std::string Policy::to_toml() const {
  std::string out = "# kernelgate policy " + quoted(name) + ": effective settings";
  if (!source.empty()) out += ", read from " + source;
  out += "\n# Schema and meaning of every key: docs/policies.md\n\n";
  schema::for_each_section([&](const schema::Field* first, const schema::Field* last) { write_section(first, last, *this, out); });
  return out;
}

}  // namespace kg::policy

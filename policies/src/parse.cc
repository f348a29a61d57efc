// TOML text -> Policy, key by key as the schema table (policy_schema.h) lists them: every key is
// known, every value has its type and range, and every error names the file, line, column and
// the full key (toml_reader.h), because a profile decides verdicts and a silently ignored typo
// would change them. The non-scalar keys' readers are here too.
#include "kernelgate/catalogue.h"
#include "kernelgate/names.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "kernelgate/toml_reader.h"
#include "policy_internal.h"
#include "policy_schema.h"

namespace kg::policy {
namespace schema {
namespace {

// A dtype key of [tolerance] or [op.X]: one of float_dtypes(), with a hint for other spellings.
std::string dtype(const TomlReader& r, const toml::key& k, const std::string& key) {
  const std::string d(k.str());
  const auto& f = float_dtypes();
  const auto short_dtype = names::try_parse_short_dtype(d);
  if (short_dtype && names::is_floating(*short_dtype)) return d;
  // An exact dtype by its short name, or "bool" (the one torch name taken here).
  if (short_dtype || d == names::torch_name(names::Dtype::B8))
    r.fail(k.source(), key,
           "dtype '" + d +
               "' is an integer or bool type, which is always compared exactly; "
               "tolerances exist only for " +
               comma_list(f));
  // A floating dtype's torch name ("float32", "torch.half") hints at the short one this schema uses.
  std::string hint;
  if (const auto torch_dtype = names::try_parse_torch_dtype(d); torch_dtype && names::is_floating(*torch_dtype))
    hint = " (did you mean '" + std::string(names::short_name(*torch_dtype)) + "'?)";
  if (hint.empty()) hint = did_you_mean(d, f);
  r.fail(k.source(), key, "unknown dtype '" + d + "'" + hint + "; tolerances are set for " + comma_list(f));
}

// {atol, rtol}, each optional: a missing one keeps `t`'s value (the inherited setting).
void read_tolerance(const TomlReader& r, const toml::node& n, const std::string& key, Tolerance& t) {
  const auto& tbl = r.table(n, key, "; write { atol = ..., rtol = ... }");
  std::vector<std::string> keys;
  for (const auto& f : tolerance_fields()) keys.emplace_back(f.key);
  r.only_keys(tbl, key, keys);
  for (const auto& f : tolerance_fields())
    if (auto v = tbl.get(f.key)) t.*f.member = r.number(*v, toml_key_path(key, f.key), kToleranceRange);
}

bool valid_op_name(std::string_view op) {
  // The profile spelling, name.overload, neither part starting with a digit: "_softmax.default",
  // "add_.Tensor", "sum.dim_IntList" (not a bare "mm").
  const auto name = names::OpName::try_parse_unqualified(op);
  const auto digit_first = [](const std::string& part) { return std::isdigit(static_cast<unsigned char>(part[0])) != 0; };
  return name && name->profile() == op && !digit_first(name->name()) && !digit_first(name->overload());
}

}  // namespace

void read_name(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p) {
  p.name = r.string(value, key);
  if (p.name.empty()) r.fail(value, key, "must not be empty");
}

void read_tolerances(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p) {
  const auto& tbl = r.table(value, key);
  for (auto&& [k, v] : tbl) {
    const std::string dkey = toml_key_path(key, k.str());
    const std::string d = dtype(r, k, dkey);
    read_tolerance(r, v, dkey, p.tolerances[d]);
  }
}

void read_op_tolerances(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p) {
  const auto& tbl = r.table(value, key);
  for (auto&& [opk, opv] : tbl) {
    const std::string op(opk.str());
    const std::string opkey = toml_key_path(key, op);
    if (const auto unqualified = names::without_aten_prefix(op))
      r.fail(opk.source(), opkey, "write the overload without the namespace: \"" + std::string(*unqualified) + "\"");
    if (!valid_op_name(op))
      r.fail(opk.source(), opkey,
             "not an op overload name; write name.overload as the trace files do, e.g. \"sum.default\", "
             "\"add.Tensor\", \"_softmax.default\"");
    const auto& per_dtype = r.table(opv, opkey);
    auto& out = p.op_tolerances[op];
    for (auto&& [dk, dv] : per_dtype) {
      const std::string dkey = toml_key_path(opkey, dk.str());
      for (const auto& f : tolerance_fields())
        if (dk.str() == f.key) r.fail(dk.source(), dkey, "op overrides are per dtype: write [" + opkey + ".f32] with atol/rtol under it");
      const std::string d = dtype(r, dk, dkey);
      // Unset fields inherit the base profile's override for this op, else the dtype's setting.
      auto it = out.find(d);
      Tolerance t = it != out.end() ? it->second : p.tolerance_for("", d);
      read_tolerance(r, dv, dkey, t);
      out[d] = t;
    }
  }
}

void read_rules(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p) {
  const auto& tbl = r.table(value, key);
  for (auto&& [k, v] : tbl) {
    const std::string rkey = toml_key_path(key, k.str());
    if (!rule_from_id(k.str())) {
      const auto& known = known_rules();
      r.fail(k.source(), rkey,
             "unknown rule id '" + std::string(k.str()) + "'" + did_you_mean(k.str(), known) +
                 "; rule ids (docs/threats.md): " + comma_list(known));
    }
    const std::string a = r.string(v, rkey);
    Action act;
    if (a == "reject") act = Action::Reject;
    else if (a == "flag") act = Action::Flag;
    else if (a == "off") act = Action::Off;
    else r.fail(v, rkey, "unknown action \"" + a + "\"; expected \"reject\", \"flag\" or \"off\"");
    p.rules[std::string(k.str())] = act;
  }
}

void read_allowed_libraries(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p) {
  const auto& arr = r.array(value, key, " of strings");
  std::vector<std::string> libs;
  for (size_t i = 0; i < arr.size(); ++i) {
    const auto& e = *arr.get(i);
    const std::string ekey = key + "[" + std::to_string(i) + "]";
    std::string lib = r.string(e, ekey);
    const auto& known = known_libraries();
    if (std::find(known.begin(), known.end(), lib) == known.end())
      r.fail(e, ekey, "unknown library \"" + lib + "\"" + did_you_mean(lib, known) + "; known: " + comma_list(known));
    if (std::find(libs.begin(), libs.end(), lib) != libs.end()) r.fail(e, ekey, "library \"" + lib + "\" listed twice");
    libs.push_back(lib);
  }
  p.allowed_libraries = libs;  // replaces the base profile's list: what is allowed is stated whole
}

void read_reward_preset(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p) {
  const std::string name = r.string(value, key);
  std::vector<std::string> known;
  for (const RewardPreset& preset : reward_presets()) known.push_back(preset.name);
  if (std::find(known.begin(), known.end(), name) == known.end())
    r.fail(value, key, "unknown reward preset \"" + name + "\"" + did_you_mean(name, known) + "; known: " + comma_list(known));
  p.reward_preset = name;
}

void check_reps_order(const TomlReader& r, const toml::table& timing, const Policy& p) {
  if (p.timing_max_reps >= p.timing_min_reps) return;
  const toml::node* max = timing.get("max_reps");
  const toml::node* at = max ? max : timing.get("min_reps");
  r.fail(*at, max ? "timing.max_reps" : "timing.min_reps",
         "max_reps (" + std::to_string(p.timing_max_reps) + ") is below min_reps (" + std::to_string(p.timing_min_reps) + ")");
}

}  // namespace schema

namespace detail {
namespace {

using schema::Field;
using schema::Type;

// One file: its name for every error, and the `base` chain that led to it.
class Reader {
 public:
  Reader(const std::string& source, std::vector<std::string>& chain) : r_(source), chain_(chain) {}

  Policy read(const toml::table& root) const {
    r_.only_keys(root, "", schema::keys_in(""));
    Policy p = start(root);
    schema::for_each_section([&](const Field* first, const Field* last) { read_section(root, first, last, p); });
    if (p.name.empty()) r_.fail(toml::source_region{}, "name", "missing, and the source has no file name to use");
    return p;
  }

 private:
  // The settings this file starts from: its base's effective settings, else the built-in defaults
  // written out, so the struct holds the effective settings. Name and description describe this
  // file and are never inherited.
  Policy start(const toml::table& root) const {
    Policy p;
    if (auto b = root.get("base")) {
      const std::string base = r_.string(*b, "base");
      try {
        p = detail::load(base, r_.file(), chain_);
      } catch (const PolicyError& e) { r_.fail(*b, "base", std::string("cannot use base profile \"") + base + "\": " + e.what()); }
    } else {
      for (const auto& d : float_dtypes()) p.tolerances[d] = builtin_tolerance(d);
      for (const auto& r : known_rules()) p.rules[r] = Action::Reject;
    }
    p.source = r_.file();
    p.name = stem(r_.file());
    p.description.clear();
    return p;
  }

  // The fields [first, last) of one section (or the top level), in table order.
  void read_section(const toml::table& root, const Field* first, const Field* last, Policy& p) const {
    const std::string section = first->section;
    if (section.empty()) {
      for (const Field* f = first; f != last; ++f)
        if (auto v = root.get(f->key)) read_value(*f, *v, f->key, p);
      return;
    }
    const toml::node* node = root.get(section);
    if (!node) return;
    if (first->type == Type::Map) return first->read(r_, *node, section, p);
    const toml::table& tbl = r_.table(*node, section);
    r_.only_keys(tbl, section, schema::keys_in(section));
    for (const Field* f = first; f != last; ++f) {
      if (f->type == Type::Check) f->check(r_, tbl, p);
      else if (auto v = tbl.get(f->key)) read_value(*f, *v, toml_key_path(section, f->key), p);
    }
  }

  void read_value(const Field& f, const toml::node& v, const std::string& key, Policy& p) const {
    switch (f.type) {
      case Type::String: p.*std::get<std::string Policy::*>(f.member) = r_.string(v, key); break;
      case Type::Boolean: p.*std::get<bool Policy::*>(f.member) = r_.boolean(v, key); break;
      case Type::Integer: p.*std::get<int Policy::*>(f.member) = static_cast<int>(r_.integer(v, key, f.min, f.max)); break;
      case Type::Number: p.*std::get<double Policy::*>(f.member) = r_.number(v, key, f.range); break;
      case Type::Custom:
      case Type::Map: f.read(r_, v, key, p); break;
      case Type::Start:  // read by start()
      case Type::Check: break;
    }
  }

  TomlReader r_;
  std::vector<std::string>& chain_;
};

}  // namespace

std::string stem(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string ext = ".toml";
  if (base.size() > ext.size() && base.compare(base.size() - ext.size(), ext.size(), ext) == 0) base.resize(base.size() - ext.size());
  return base;
}

Policy parse(const std::string& text, const std::string& source, std::vector<std::string>& chain) {
  try {
    const toml::table root = parse_toml(text, source, kMaxPolicyBytes);
    return Reader(source, chain).read(root);
  } catch (const TomlError& e) { throw PolicyError(e.what()); }
}

}  // namespace detail

Policy parse(const std::string& text, const std::string& source) {
  std::vector<std::string> chain;
  return detail::parse(text, source, chain);
}

}  // namespace kg::policy

// The policy schema: every key a profile may set, in one table (policy_schema.cc) that parse.cc
// reads by, to_toml.cc writes by, operator== compares by and `kernelgate policy schema` prints
// as the key table of docs/policies.md. Internal to kg_policies.
//
// Scalar keys (strings, booleans, integers, numbers) are read, written and compared through a
// pointer to their Policy member. The rest (the tolerance maps, rule actions, the library list,
// `name`) are listed in the same table with their own read and write functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "kernelgate/policy.h"
#include "kernelgate/toml_reader.h"

namespace kg::policy::schema {

enum class Type {
  Start,   // `base`: read before every other key, as the settings the file starts from
  String,  // scalars: read, written and compared through `member`
  Boolean,
  Integer,  // within [min, max]
  Number,   // within `range`
  Custom,   // one key read and written by `read` / `write` (name, libraries.allowed)
  Map,      // a whole section of names -> values, by `read` / `write` ([tolerance], [op], [rules])
  Check,    // no key: `check` runs over the section once the keys before it are read
};

// The Policy member a field sets; std::monostate for none (base, a check).
using Member = std::variant<std::monostate, std::string Policy::*, bool Policy::*, int Policy::*, double Policy::*,
                            std::map<std::string, Tolerance> Policy::*, std::map<std::string, std::map<std::string, Tolerance>> Policy::*,
                            std::map<std::string, Action> Policy::*, std::vector<std::string> Policy::*>;

// Reads the value at `key` (its full dotted path; for a Map, the section's name) into `p`.
using ReadFn = void (*)(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p);
// Appends the field's TOML lines (a Map: its blank line, comment and headers too).
using WriteFn = void (*)(const Policy& p, std::string& out);
using CheckFn = void (*)(const TomlReader& r, const toml::table& section, const Policy& p);
using TextFn = std::string (*)();

struct Field {
  const char* section;  // "" for a top-level key, else the [section] it is under
  const char* key;      // for a Map, the docs' placeholder for its keys ("<dtype>")
  Type type;
  Member member;
  int64_t min = 0, max = 0;  // Integer
  NumberRange range{};       // Number
  ReadFn read = nullptr;     // Custom, Map
  WriteFn write = nullptr;   // Custom, Map
  CheckFn check = nullptr;   // Check
  // For the docs table; a scalar's type, values and default follow from the above and Policy{}.
  const char* type_doc = nullptr;
  TextFn values_doc = nullptr;
  const char* default_doc = nullptr;
  const char* doc = "";
};

// Every field, in the order files are read and written.
const std::vector<Field>& fields();
// Calls fn(first, last) for each run [first, last) of fields under one section (the top level's
// keys are one run, each Map another), in table order.
template <class Fn>
void for_each_section(Fn fn) {
  const std::vector<Field>& all = fields();
  for (size_t i = 0; i < all.size();) {
    size_t end = i + 1;
    while (end < all.size() && std::string(all[end].section) == all[i].section) ++end;
    fn(all.data() + i, all.data() + end);
    i = end;
  }
}
// The keys allowed in `section` ("": the top level, whose keys include the sections), in order.
std::vector<std::string> keys_in(const std::string& section);

// The fields of a {atol, rtol} table and the range of each.
struct ToleranceField {
  const char* key;
  double Tolerance::*member;
};
const std::vector<ToleranceField>& tolerance_fields();
// Atol and rtol are compared as doubles only; past 1e9 a tolerance passes every finite output.
inline constexpr NumberRange kToleranceRange{0, false, 1e9, "a tolerance is a distance, at most 1e9"};

// The docs table of every key (docs/policies.md carries it between its schema markers).
std::string markdown_table();

// Defined in parse.cc.
void read_name(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p);
void read_tolerances(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p);
void read_op_tolerances(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p);
void read_rules(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p);
void read_allowed_libraries(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p);
void read_reward_preset(const TomlReader& r, const toml::node& value, const std::string& key, Policy& p);
void write_reward_preset(const Policy& p, std::string& out);
void check_reps_order(const TomlReader& r, const toml::table& timing, const Policy& p);

// Defined in to_toml.cc.
void write_name(const Policy& p, std::string& out);
void write_tolerances(const Policy& p, std::string& out);
void write_op_tolerances(const Policy& p, std::string& out);
void write_rules(const Policy& p, std::string& out);
void write_allowed_libraries(const Policy& p, std::string& out);

}  // namespace kg::policy::schema

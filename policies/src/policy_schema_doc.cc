// The schema as a markdown table: `kernelgate policy schema` prints it and docs/policies.md
// carries it (PolicyDocs checks the two are the same).
#include <string>

#include "policy_schema.h"

namespace kg::policy {
namespace schema {
namespace {

// A markdown table cell: '|' would end it.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string type_of(const Field& f) {
  switch (f.type) {
    case Type::String: return "string";
    case Type::Boolean: return "boolean";
    case Type::Integer: return "integer";
    case Type::Number: return "number";
    default: return f.type_doc ? f.type_doc : "";
  }
}

std::string values_of(const Field& f) {
  switch (f.type) {
    case Type::String: return "any";
    case Type::Boolean: return "true, false";
    case Type::Integer: return std::to_string(f.min) + " <= x <= " + std::to_string(f.max);
    case Type::Number: return describe(f.range);
    default: return f.values_doc ? f.values_doc() : "";
  }
}

// A scalar's default is what a default-constructed Policy holds.
std::string default_of(const Field& f) {
  static const Policy defaults;
  switch (f.type) {
    case Type::String: return "\"" + defaults.*std::get<std::string Policy::*>(f.member) + "\"";
    case Type::Boolean: return defaults.*std::get<bool Policy::*>(f.member) ? "true" : "false";
    case Type::Integer: return std::to_string(defaults.*std::get<int Policy::*>(f.member));
    case Type::Number: return shortest_decimal(defaults.*std::get<double Policy::*>(f.member));
    default: return f.default_doc ? f.default_doc : "";
  }
}

}  // namespace

std::string markdown_table() {
  std::string out = "| key | type | accepted values | default | meaning |\n|---|---|---|---|---|\n";
  for (const Field& f : fields()) {
    if (f.type == Type::Check) continue;
    const std::string key = *f.section ? std::string(f.section) + "." + f.key : f.key;
    out += "| `" + cell(key) + "` | " + cell(type_of(f)) + " | " + cell(values_of(f)) + " | " + cell(default_of(f)) + " | " + cell(f.doc) +
           " |\n";
  }
  return out;
}

}  // namespace schema

std::string schema_table() { return schema::markdown_table(); }

}  // namespace kg::policy

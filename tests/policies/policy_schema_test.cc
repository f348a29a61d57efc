// PolicySchema: the schema table drives parsing, printing, comparison and the docs table alike.
// Each scalar row of schema_table() is checked against the parser (its range's ends are accepted,
// one step past them is an error naming the key, its default is what a file without it gets),
// against to_toml() (it prints the key in its section) and against operator== (every setting
// counts, the source does not).
#include "policy_test_util.h"

#include <sstream>

namespace kg::policy {
namespace {

struct Row {
  std::string section, key, type, values, default_value;
};

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  size_t at = 1;  // past the leading '|'
  while (at < line.size()) {
    size_t end = line.find(" | ", at);
    if (end == std::string::npos) end = line.rfind(" |");
    std::string c = line.substr(at, end - at);
    c.erase(0, c.find_first_not_of(' '));
    out.push_back(c);
    at = end + 3;
  }
  return out;
}

// The rows whose key is one scalar: `section.key` with type string, boolean, integer or number.
std::vector<Row> scalar_rows() {
  std::vector<Row> rows;
  std::istringstream in(schema_table());
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    const auto c = cells(line);
    if (c.size() != 5) ADD_FAILURE() << "not five cells: " << line;
    if (c.size() != 5 || (c[1] != "string" && c[1] != "boolean" && c[1] != "integer" && c[1] != "number")) continue;
    const std::string full = c[0].substr(1, c[0].size() - 2);  // without the backticks
    // A map's placeholder key (`rules.<rule id>`), or a string whose default is not a value (`name`).
    if (full.find('<') != std::string::npos || (c[1] == "string" && c[3].rfind('"', 0) != 0)) continue;
    const size_t dot = full.find('.');
    Row r{dot == std::string::npos ? "" : full.substr(0, dot), dot == std::string::npos ? full : full.substr(dot + 1), c[1], c[2], c[3]};
    rows.push_back(r);
  }
  return rows;
}

// A file setting the row's key to `value`; `partner` also moves the other end of the reps
// range out of the way (min_reps above the default max_reps is refused for that reason instead).
std::string file_setting(const Row& r, const std::string& value, bool partner = false) {
  std::string text = r.section.empty() ? "" : "[" + r.section + "]\n";
  text += r.key + " = " + value + "\n";
  if (partner && r.section == "timing" && r.key == "min_reps") text += "max_reps = 10000000\n";
  if (partner && r.section == "timing" && r.key == "max_reps") text += "min_reps = 1\n";
  return text;
}

TEST(PolicySchema, TableListsEverySection) {
  const std::string t = schema_table();
  for (const char* k : {"`base`", "`name`", "`description`", "`tolerance.<dtype>`", "`op.\"<overload>\".<dtype>`", "`rules.<rule id>`",
                        "`libraries.allowed`", "`trials.correctness`", "`timing.enabled`", "`limits.cache_artifact_mb`"})
    EXPECT_NE(t.find("| " + std::string(k) + " |"), std::string::npos) << k;
  EXPECT_GE(scalar_rows().size(), 13u);
}

TEST(PolicySchema, RangesOfTheTableAreTheParsers) {
  for (const Row& r : scalar_rows()) {
    if (r.type != "integer" && r.type != "number") continue;
    SCOPED_TRACE(r.section + "." + r.key + ": " + r.values);
    std::istringstream v(r.values);
    double lo, hi;
    std::string op1, x, op2;
    ASSERT_TRUE(v >> lo >> op1 >> x >> op2 >> hi) << r.values;
    const double step = r.type == "integer" ? 1 : 0.5;
    auto text = [&](double d) {
      std::ostringstream o;
      o.precision(17);
      o << d;
      std::string s = o.str();
      if (r.type == "number" && s.find_first_of(".e") == std::string::npos) s += ".0";
      return file_setting(r, s, true);
    };
    const std::string key = "key '" + r.section + "." + r.key + "'";
    EXPECT_NO_THROW(parse(text(hi), "edge.toml"));
    EXPECT_NE(test::error_of(text(hi + step)).find(key), std::string::npos);
    if (op1 == "<=") { EXPECT_NO_THROW(parse(text(lo), "edge.toml")); }
    EXPECT_NE(test::error_of(text(op1 == "<=" ? lo - step : lo)).find(key), std::string::npos);
  }
}

TEST(PolicySchema, DefaultsOfTheTableAreTheParsers) {
  const Policy defaults = parse("", "d.toml");
  for (const Row& r : scalar_rows()) {
    SCOPED_TRACE(r.section + "." + r.key + " = " + r.default_value);
    EXPECT_TRUE(parse(file_setting(r, r.default_value), "d.toml") == defaults);
  }
}

TEST(PolicySchema, ToTomlPrintsEveryKeyInItsSection) {
  const std::string text = parse("", "d.toml").to_toml();
  for (const Row& r : scalar_rows()) {
    const size_t header = r.section.empty() ? 0 : text.find("\n[" + r.section + "]\n");
    ASSERT_NE(header, std::string::npos) << r.section;
    const size_t key = text.find("\n" + r.key + " = ", header);
    EXPECT_NE(key, std::string::npos) << r.key;
    const size_t next = text.find("\n[", header + 1);
    if (!r.section.empty() && next != std::string::npos) { EXPECT_LT(key, next) << r.key; }
  }
}

TEST(PolicySchema, EqualityCoversEverySettingButTheSource) {
  const Policy p = parse("", "d.toml");
  std::vector<void (*)(Policy&)> changes = {
      [](Policy& q) { q.name = "other"; },
      [](Policy& q) { q.description = "other"; },
      [](Policy& q) { q.tolerances["f32"].atol = 1; },
      [](Policy& q) { q.tolerances["f32"].rtol = 1; },
      [](Policy& q) {
        q.op_tolerances["mm.default"]["f32"] = {1, 1};
      },
      [](Policy& q) { q.rules["impossible_speed"] = Action::Flag; },
      [](Policy& q) { q.allowed_libraries.push_back("cub"); },
      [](Policy& q) { q.correctness_trials = 2; },
      [](Policy& q) { q.timing_warmup = 4; },
      [](Policy& q) { q.timing_min_reps = 11; },
      [](Policy& q) { q.timing_max_reps = 201; },
      [](Policy& q) { q.timing_min_seconds = 1; },
      [](Policy& q) { q.timing_rotation_mib = 1; },
      [](Policy& q) { q.timing_stop_rel_error = 0.01; },
      [](Policy& q) { q.timing = false; },
      [](Policy& q) { q.compile_time_s = 1; },
      [](Policy& q) { q.compile_memory_mb = 1; },
      [](Policy& q) { q.run_call_time_s = 1; },
      [](Policy& q) { q.run_memory_mb = 1; },
      [](Policy& q) { q.cache_artifact_mb = 1; },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    Policy q = p;
    changes[i](q);
    EXPECT_TRUE(q != p) << "change " << i;
  }
  Policy q = p;
  q.source = "elsewhere.toml";
  EXPECT_TRUE(q == p);
}

TEST(PolicySchema, UnknownKeyListsAreTheTables) {
  EXPECT_POLICY_ERROR(
      "frobnicate = 1\n",
      "known keys: base, name, description, tolerance, op, context_tolerance, train, rules, libraries, trials, timing, reward, limits");
  EXPECT_POLICY_ERROR("[timing]\nx = 1\n", "known keys in [timing]: enabled, warmup, min_reps, max_reps, min_seconds, rotation_mib");
  EXPECT_POLICY_ERROR("[limits]\nx = 1\n",
                      "known keys in [limits]: compile_time_s, compile_memory_mb, run_call_time_s, run_memory_mb, "
                      "cache_artifact_mb");
}

}  // namespace
}  // namespace kg::policy

// Catalogue*: the rule, category and verdict tables of kernelgate/catalogue.h are well formed
// (unique ids, ids and enums round-trip, every rule has its threat, layer and documentation), and
// the docs list exactly their ids: README.md, docs/rules.md, docs/verdicts.md, docs/threats.md.
#include "kernelgate/catalogue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernelgate/policy.h"

namespace kg::policy {
namespace {

// ---- reading the docs ----------------------------------------------------------------------

std::string read_doc(const std::string& relative) {
  const std::string path = std::string(KG_TEST_SOURCE_DIR) + "/" + relative;
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream o;
  o << in.rdbuf();
  return o.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The cells of a markdown table row ("| a | b |" -> {"a", "b"}); a `\|` stays inside its cell.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::string cell;
  for (size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') {
      cell += '|', ++i;
    } else if (row[i] == '|') {
      out.push_back(trimmed(cell)), cell.clear();
    } else {
      cell += row[i];
    }
  }
  return out;
}

// The body rows of the first table after the line that starts with `heading` (header and
// separator rows dropped). Fails the test when there is no such heading or table.
std::vector<std::vector<std::string>> table_after(const std::string& doc, const std::string& heading, const std::string& where) {
  const auto lines = lines_of(doc);
  size_t i = 0;
  while (i < lines.size() && lines[i].rfind(heading, 0) != 0) ++i;
  EXPECT_LT(i, lines.size()) << where << " has no heading \"" << heading << "\"";
  while (i < lines.size() && lines[i].rfind("|", 0) != 0) ++i;
  std::vector<std::vector<std::string>> rows;
  for (i += 2; i < lines.size() && lines[i].rfind("|", 0) == 0; ++i) rows.push_back(cells(lines[i]));
  EXPECT_FALSE(rows.empty()) << where << " has no table after \"" << heading << "\"";
  return rows;
}

// The text from the line starting with `heading` up to the next heading of the same level.
std::string section(const std::string& doc, const std::string& heading) {
  const std::string level = heading.substr(0, heading.find(' ') + 1);
  std::string out;
  bool inside = false;
  for (const auto& line : lines_of(doc)) {
    if (inside && line.rfind(level, 0) == 0) break;
    if (line.rfind(heading, 0) == 0) inside = true;
    if (inside) out += line + "\n";
  }
  return out;
}

// Every `word` in `text` that looks like an id: lower case letters, digits and '_'.
std::set<std::string> backticked_ids(const std::string& text) {
  std::set<std::string> out;
  for (size_t b = text.find('`'); b != std::string::npos; b = text.find('`', b + 1)) {
    size_t e = text.find('`', b + 1);
    if (e == std::string::npos) break;
    std::string w = text.substr(b + 1, e - b - 1);
    bool id = !w.empty();
    for (char c : w) id = id && (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_');
    if (id) out.insert(w);
    b = e;
  }
  return out;
}

// The text inside the parentheses that follow `marker` in `text` (nested ones included).
std::string parenthesised_after(const std::string& text, const std::string& marker) {
  size_t p = text.find(marker + " (");
  if (p == std::string::npos) return "";
  size_t start = p + marker.size() + 2;
  int depth = 1;
  for (size_t i = start; i < text.size(); ++i) {
    depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
    if (depth == 0) return text.substr(start, i - start);
  }
  return "";
}

// The README.md row of results.json's key `key` ("| `verdict` | ... |"), its meaning cell.
std::string readme_key_row(const std::string& readme, const std::string& key) {
  for (const auto& line : lines_of(readme))
    if (line.rfind("| `" + key + "` |", 0) == 0) return cells(line).at(1);
  ADD_FAILURE() << "README.md has no row for `" << key << "`";
  return "";
}

// ---- the catalogue's ids -------------------------------------------------------------------

std::set<std::string> rule_ids() {
  std::set<std::string> s;
  for (const auto& r : rule_catalogue()) s.insert(r.id);
  return s;
}
std::set<std::string> category_ids() {
  std::set<std::string> s;
  for (const auto& c : category_catalogue()) s.insert(c.id);
  return s;
}
std::set<std::string> verdict_ids() {
  std::set<std::string> s;
  for (const auto& v : verdict_catalogue()) s.insert(v.id);
  return s;
}

void expect_same_ids(const std::set<std::string>& documented, const std::set<std::string>& catalogue, const std::string& where) {
  for (const auto& d : documented) EXPECT_TRUE(catalogue.count(d)) << where << " lists `" << d << "`, which the catalogue does not have";
  for (const auto& c : catalogue) EXPECT_TRUE(documented.count(c)) << where << " does not list `" << c << "`";
}

// "static, runner" for the layer bits of a rule, in kLayers order.
std::string layer_names(unsigned layers) {
  std::string out;
  for (unsigned l : kLayers)
    if (layers & l) out += (out.empty() ? "" : ", ") + std::string(layer_name(l));
  return out;
}

std::vector<std::string> threat_items(const RuleInfo& r) {
  std::vector<std::string> out;
  std::istringstream in(r.threats);
  for (std::string item; std::getline(in, item, ',');) out.push_back(trimmed(item));
  return out;
}

// ---- the tables ----------------------------------------------------------------------------

TEST(Catalogue, RowsAreInEnumOrder) {
  for (size_t i = 0; i < rule_catalogue().size(); ++i)
    EXPECT_EQ(static_cast<size_t>(rule_catalogue()[i].rule), i) << rule_catalogue()[i].id;
  for (size_t i = 0; i < category_catalogue().size(); ++i)
    EXPECT_EQ(static_cast<size_t>(category_catalogue()[i].category), i) << category_catalogue()[i].id;
  for (size_t i = 0; i < verdict_catalogue().size(); ++i)
    EXPECT_EQ(static_cast<size_t>(verdict_catalogue()[i].verdict), i) << verdict_catalogue()[i].id;
  EXPECT_EQ(rule_catalogue().size(), static_cast<size_t>(Rule::SandboxViolation) + 1);
  EXPECT_EQ(category_catalogue().size(), static_cast<size_t>(Category::MemoryLimit) + 1);
  EXPECT_EQ(verdict_catalogue().size(), static_cast<size_t>(Verdict::Error) + 1);
}

TEST(Catalogue, IdsAreUnique) {
  EXPECT_EQ(rule_ids().size(), rule_catalogue().size());
  EXPECT_EQ(category_ids().size(), category_catalogue().size());
  EXPECT_EQ(verdict_ids().size(), verdict_catalogue().size());
}

TEST(Catalogue, IdsRoundTrip) {
  for (const auto& r : rule_catalogue()) {
    EXPECT_EQ(rule_from_id(r.id), r.rule) << r.id;
    EXPECT_STREQ(rule_id(r.rule), r.id);
    EXPECT_EQ(&rule_info(r.rule), &r);
  }
  for (const auto& c : category_catalogue()) {
    EXPECT_EQ(category_from_id(c.id), c.category) << c.id;
    EXPECT_STREQ(category_id(c.category), c.id);
  }
  for (const auto& v : verdict_catalogue()) {
    EXPECT_EQ(verdict_from_id(v.id), v.verdict) << v.id;
    EXPECT_STREQ(verdict_id(v.verdict), v.id);
  }
  for (const char* unknown : {"", "Fallback_to_torch", "fallback_to_torch ", "aten::relu", "value"}) {
    EXPECT_FALSE(rule_from_id(unknown)) << unknown;
    EXPECT_FALSE(category_from_id(unknown)) << unknown;
    EXPECT_FALSE(verdict_from_id(unknown)) << unknown;
  }
  // input_mutated is both a rule and a category: the same word for the same evidence.
  EXPECT_EQ(rule_from_id("input_mutated"), Rule::InputMutated);
  EXPECT_EQ(category_from_id("input_mutated"), Category::InputMutated);
}

TEST(Catalogue, EveryRuleHasThreatLayerCheckAndDoc) {
  unsigned all_layers = 0;
  for (unsigned l : kLayers) {
    EXPECT_STRNE(layer_name(l), "") << l;
    all_layers |= l;
  }
  for (const auto& r : rule_catalogue()) {
    for (const auto& item : threat_items(r)) {
      const bool section = item.size() == 1 && item[0] >= 'A' && item[0] <= 'D';
      const bool numbered =
          item.size() >= 2 && item[0] >= 'A' && item[0] <= 'D' && item.find_first_not_of("0123456789", 1) == std::string::npos;
      EXPECT_TRUE(section || numbered) << r.id << ": threat \"" << item << "\" is not a docs/threats.md item";
    }
    EXPECT_NE(r.layers, 0u) << r.id;
    EXPECT_EQ(r.layers & ~all_layers, 0u) << r.id;
    EXPECT_STRNE(r.checked, "") << r.id;
    EXPECT_STRNE(r.doc, "") << r.id;
    EXPECT_EQ(std::string(r.doc).find('\n'), std::string::npos) << r.id;
  }
  for (const auto& c : category_catalogue()) EXPECT_STRNE(c.doc, "") << c.id;
  for (const auto& v : verdict_catalogue()) EXPECT_STRNE(v.doc, "") << v.id;
}

TEST(Catalogue, KnownRulesAreTheCatalogueInOrder) {
  std::vector<std::string> ids;
  for (const auto& r : rule_catalogue()) ids.emplace_back(r.id);
  EXPECT_EQ(known_rules(), ids);
}

// ---- the docs ------------------------------------------------------------------------------

TEST(CatalogueDocs, RulesMdTableIsTheCatalogue) {
  const auto rows = table_after(read_doc("docs/rules.md"), "## The rule catalogue", "docs/rules.md");
  std::set<std::string> documented;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 4u) << "docs/rules.md: | rule | threats | detected by | catches |";
    const auto ids = backticked_ids(row[0]);
    ASSERT_EQ(ids.size(), 1u) << row[0];
    const std::string id = *ids.begin();
    documented.insert(id);
    auto rule = rule_from_id(id);
    if (!rule) continue;  // reported by expect_same_ids
    const RuleInfo& r = rule_info(*rule);
    EXPECT_EQ(row[1], r.threats) << id;
    EXPECT_EQ(row[2], layer_names(r.layers)) << id;
    EXPECT_EQ(row[3], r.doc) << id;
  }
  expect_same_ids(documented, rule_ids(), "docs/rules.md's rule catalogue");
}

// docs/rules.md says, for every rule in the catalogue's order, the evidence it requires and the
// honest failure it must never be confused with.
TEST(CatalogueDocs, RulesMdEvidenceTableCoversEveryRuleInOrder) {
  const auto rows =
      table_after(read_doc("docs/rules.md"), "## What each rule needs as evidence, and what it is never confused with", "docs/rules.md");
  std::vector<std::string> documented, catalogue;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 3u) << "docs/rules.md: | rule | evidence it requires | never confused with |";
    const auto ids = backticked_ids(row[0]);
    ASSERT_EQ(ids.size(), 1u) << row[0];
    documented.push_back(*ids.begin());
    EXPECT_GE(row[1].size(), 40u) << *ids.begin() << ": the evidence it requires";
    EXPECT_GE(row[2].size(), 20u) << *ids.begin() << ": what it is never confused with";
  }
  for (const auto& r : rule_catalogue()) catalogue.emplace_back(r.id);
  EXPECT_EQ(documented, catalogue);
}

TEST(CatalogueDocs, VerdictsMdTablesAreTheCatalogue) {
  const std::string doc = read_doc("docs/verdicts.md");
  std::set<std::string> verdicts, categories;
  for (const auto& row : table_after(doc, "## Verdicts and failure categories", "docs/verdicts.md")) {
    ASSERT_EQ(row.size(), 2u) << "docs/verdicts.md: | verdict | meaning |";
    const auto ids = backticked_ids(row[0]);
    ASSERT_EQ(ids.size(), 1u) << row[0];
    verdicts.insert(*ids.begin());
    if (auto v = verdict_from_id(*ids.begin())) { EXPECT_EQ(row[1], verdict_info(*v).doc) << *ids.begin(); }
  }
  for (const auto& row : table_after(doc, "### Failure categories", "docs/verdicts.md")) {
    ASSERT_EQ(row.size(), 2u) << "docs/verdicts.md: | category | meaning |";
    const auto ids = backticked_ids(row[0]);
    ASSERT_EQ(ids.size(), 1u) << row[0];
    categories.insert(*ids.begin());
    if (auto c = category_from_id(*ids.begin())) { EXPECT_EQ(row[1], category_info(*c).doc) << *ids.begin(); }
  }
  expect_same_ids(verdicts, verdict_ids(), "docs/verdicts.md's verdict table");
  expect_same_ids(categories, category_ids(), "docs/verdicts.md's category table");
}

TEST(CatalogueDocs, ReadmeListsRulesCategoriesAndVerdicts) {
  const std::string readme = read_doc("README.md");
  expect_same_ids(backticked_ids(readme_key_row(readme, "verdict")), verdict_ids(), "README.md's `verdict` row");
  expect_same_ids(backticked_ids(parenthesised_after(readme_key_row(readme, "failures"), "`category`")), category_ids(),
                  "README.md's `failures` row");
  expect_same_ids(backticked_ids(parenthesised_after(readme_key_row(readme, "violations"), "`rule`")), rule_ids(),
                  "README.md's `violations` row");
}

// docs/threats.md names every rule and only catalogue ids, and its section B table agrees with
// the catalogue's threat items both ways: a rule answering B3 is named on B3's row, and a rule
// named on a row answers that item. A rule answering a whole section is named in that section.
TEST(CatalogueDocs, ThreatsMdMatchesTheCatalogue) {
  const std::string doc = read_doc("docs/threats.md");
  std::set<std::string> named_rules;
  for (const auto& id : backticked_ids(doc))
    if (rule_from_id(id)) named_rules.insert(id);
  expect_same_ids(named_rules, rule_ids(), "docs/threats.md");

  const auto rows = table_after(doc, "## B.", "docs/threats.md");
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 3u) << "docs/threats.md section B: | # | attempt | answered by |";
    for (const auto& id : backticked_ids(row[2])) {
      auto rule = rule_from_id(id);
      EXPECT_TRUE(rule || category_from_id(id)) << "docs/threats.md " << row[0] << " names `" << id << "`, neither a rule nor a category";
      if (!rule) continue;
      const auto items = threat_items(rule_info(*rule));
      EXPECT_NE(std::find(items.begin(), items.end(), row[0]), items.end())
          << "docs/threats.md " << row[0] << " names `" << id << "`, whose catalogue threats are " << rule_info(*rule).threats;
    }
  }
  for (const auto& r : rule_catalogue()) {
    for (const auto& item : threat_items(r)) {
      std::string where;
      if (item.size() == 1) {
        where = section(doc, "## " + item + ".");
      } else {
        for (const auto& row : rows)
          if (row.size() == 3 && row[0] == item) where = row[2];
      }
      EXPECT_TRUE(backticked_ids(where).count(r.id)) << "docs/threats.md " << item << " does not name `" << r.id << "`";
    }
  }
}

}  // namespace
}  // namespace kg::policy

// docs/schema/results.v1.schema.json against the documentation the catalogue is checked against
// (tests/policies/catalogue_test.cc): its verdict and failure-category enums are exactly the ids of
// docs/verdicts.md's tables, so a new verdict or category cannot leave the schema behind.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

namespace {

using nlohmann::json;

std::string read_source_file(const std::string& relative) {
  std::ifstream f(std::string(KG_SOURCE_DIR) + "/" + relative, std::ios::binary);
  EXPECT_TRUE(f.good()) << relative;
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// The first backticked id of each row of the table that follows `heading`.
std::set<std::string> table_ids(const std::string& doc, const std::string& heading) {
  std::set<std::string> ids;
  std::istringstream lines(doc.substr(doc.find(heading) + heading.size()));
  bool in_table = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    const size_t open = line.find('`');
    if (open == std::string::npos || open > line.find('|', 1)) continue;  // the header and its rule
    ids.insert(line.substr(open + 1, line.find('`', open + 1) - open - 1));
  }
  return ids;
}

std::set<std::string> enum_of(const json& schema_part) {
  std::set<std::string> out;
  for (const json& v : schema_part.at("enum")) out.insert(v.get<std::string>());
  return out;
}

TEST(ResultsSchema, VerdictsAndCategoriesAreTheOnesDocsVerdictsMdLists) {
  const json schema = json::parse(read_source_file("docs/schema/results.v1.schema.json"));
  const std::string verdicts_md = read_source_file("docs/verdicts.md");
  const std::set<std::string> verdicts = table_ids(verdicts_md, "## Verdicts and failure categories");
  const std::set<std::string> categories = table_ids(verdicts_md, "### Failure categories");
  ASSERT_EQ(verdicts.size(), 4u);
  ASSERT_GE(categories.size(), 12u);
  EXPECT_EQ(enum_of(schema["$defs"]["op"]["properties"]["verdict"]), verdicts);
  EXPECT_EQ(enum_of(schema["$defs"]["failure"]["properties"]["category"]), categories);
  EXPECT_EQ(schema["$id"].get<std::string>().find("results.v1.schema.json") != std::string::npos, true);
}

}  // namespace

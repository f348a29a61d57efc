// PolicyDocs: every ```toml block in docs/policies.md parses, and its key table is the one the
// parser reads by (schema_table()), so the documented schema and examples cannot drift from
// what the parser accepts.
#include "policy_test_util.h"

#include <sstream>

namespace kg::policy {
namespace {

TEST(PolicyDocs, EveryTomlExampleParses) {
  test::PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  std::ifstream in(KG_TEST_DOCS_FILE);
  ASSERT_TRUE(in) << KG_TEST_DOCS_FILE;
  std::string line, block;
  bool inside = false;
  int blocks = 0, start = 0, n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!inside && line == "```toml") {
      inside = true, block.clear(), start = n;
    } else if (inside && line == "```") {
      inside = false, ++blocks;
      try {
        parse(block, std::string(KG_TEST_DOCS_FILE) + " (block at line " + std::to_string(start) + ")");
      } catch (const PolicyError& e) { ADD_FAILURE() << e.what(); }
    } else if (inside) {
      block += line + "\n";
    }
  }
  EXPECT_GE(blocks, 2);
}

TEST(PolicyDocs, SchemaTableIsTheParsers) {
  std::ifstream in(KG_TEST_DOCS_FILE);
  ASSERT_TRUE(in) << KG_TEST_DOCS_FILE;
  const std::string begin = "<!-- schema table: the output of `kernelgate policy schema` -->";
  const std::string end = "<!-- end of schema table -->";
  std::string line, table;
  int state = 0;  // 0 before the table, 1 in it, 2 after it
  while (std::getline(in, line)) {
    if (state == 0 && line == begin) state = 1;
    else if (state == 1 && line == end) state = 2;
    else if (state == 1) table += line + "\n";
  }
  ASSERT_EQ(state, 2) << "docs/policies.md lacks the lines " << begin << " and " << end;
  EXPECT_EQ(table, schema_table()) << "regenerate the table with `kernelgate policy schema`";
}

}  // namespace
}  // namespace kg::policy

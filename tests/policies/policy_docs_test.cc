// PolicyDocs: every ```toml block in docs/policies.md parses, so the documented schema and
// examples cannot drift from what the parser accepts.
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
      } catch (const PolicyError& e) {
        ADD_FAILURE() << e.what();
      }
    } else if (inside) {
      block += line + "\n";
    }
  }
  EXPECT_GE(blocks, 2);
}

}  // namespace
}  // namespace kg::policy

// PolicyFuzz: mutated profiles either parse or fail with a PolicyError naming the source; no
// other exception, no crash, no hang. A deterministic stand-in for a libFuzzer target.
#include "policy_test_util.h"

#include <random>
#include <sstream>

namespace kg::policy {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PolicyFuzz, MutatedProfilesFailCleanly) {
  test::PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  const std::vector<std::string> seeds = {read(profile_dir() + "/competition.toml"), read(profile_dir() + "/backendbench.toml"),
                                          read(profile_dir() + "/audit.toml")};
  static const char kAlphabet[] = "[]{}\".=,#\n -+e0123456789abcdefgrtxnl_\\'\x00\xff";
  const std::string alphabet(kAlphabet, sizeof kAlphabet - 1);  // keeps the NUL byte
  std::mt19937 gen(7);
  int parsed = 0, rejected = 0;
  const int iterations = std::getenv("KG_POLICY_FUZZ_ITERATIONS") ? std::atoi(std::getenv("KG_POLICY_FUZZ_ITERATIONS")) : 3000;
  for (int i = 0; i < iterations; ++i) {
    std::string s = seeds[i % seeds.size()];
    const int edits = 1 + gen() % 4;
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t at = gen() % s.size();
      switch (gen() % 4) {
        case 0: s[at] = alphabet[gen() % alphabet.size()]; break;
        case 1: s.insert(at, 1, alphabet[gen() % alphabet.size()]); break;
        case 2: s.erase(at, 1 + gen() % 8); break;
        case 3: s.insert(at, s.substr(gen() % s.size(), 1 + gen() % 40)); break;
      }
    }
    try {
      Policy p = parse(s, "fuzz.toml");
      ++parsed;
      // Whatever parses must round-trip too.
      EXPECT_TRUE(parse(p.to_toml(), "again.toml") == p) << s;
    } catch (const PolicyError& e) {
      ++rejected;
      EXPECT_EQ(std::string(e.what()).rfind("fuzz.toml", 0), 0u) << e.what();
    } catch (const std::exception& e) { ADD_FAILURE() << "non-PolicyError exception: " << e.what() << "\n" << s; }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace kg::policy

// PolicyCli: `kernelgate policy show|list|schema` (tools/cmd_policy.cc), its output and exit codes.
#include "policy_test_util.h"

int kg_cmd_policy(int argc, char** argv);

namespace kg::policy {
namespace {

struct CliResult {
  int rc;
  std::string out, err;
};

CliResult run_policy(std::vector<std::string> args) {
  args.insert(args.begin(), "policy");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  int rc = kg_cmd_policy(static_cast<int>(args.size()), argv.data());
  CliResult r{rc, testing::internal::GetCapturedStdout(), testing::internal::GetCapturedStderr()};
  return r;
}

TEST(PolicyCli, ShowPrintsEffectiveSettingsThatParse) {
  test::PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  for (const auto& n : profile_names()) {
    CliResult r = run_policy({"show", n});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_TRUE(parse(r.out, "shown.toml") == load(n)) << r.out;
  }
}

TEST(PolicyCli, ShowWithoutNameIsTheDefault) {
  test::PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  CliResult r = run_policy({"show"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("name = \"competition\""), std::string::npos);
}

TEST(PolicyCli, ShowFile) {
  test::TempDir t;
  std::string path = t.write("mine.toml", "[trials]\ncorrectness = 4\n");
  CliResult r = run_policy({"show", path});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("correctness = 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(path), std::string::npos);  // the source, in the header comment
}

TEST(PolicyCli, ShowBadProfileExits2WithTheError) {
  test::TempDir t;
  std::string path = t.write("bad.toml", "[tolerance.f32]\natol = -1\n");
  CliResult r = run_policy({"show", path});
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find(path + ":2:8: key 'tolerance.f32.atol'"), std::string::npos) << r.err;
}

TEST(PolicyCli, ShowUnknownName) {
  test::PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  CliResult r = run_policy({"show", "nope"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no policy profile named \"nope\""), std::string::npos) << r.err;
}

TEST(PolicyCli, List) {
  test::PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  CliResult r = run_policy({"list"});
  EXPECT_EQ(r.rc, 0) << r.err;
  for (const char* n : {"audit", "backendbench", "competition", "rl-reward"}) EXPECT_NE(r.out.find(n), std::string::npos);
  EXPECT_NE(r.out.find("(default)"), std::string::npos);
}

TEST(PolicyCli, ListReportsABrokenProfile) {
  test::TempDir t;
  t.write("broken.toml", "[rules]\nnot_a_rule = \"off\"\n");
  t.write("fine.toml", "description = \"ok\"\n");
  test::PolicyDirOverride dir(t.path());
  CliResult r = run_policy({"list"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("broken"), std::string::npos);
  EXPECT_NE(r.out.find("BROKEN"), std::string::npos);
  EXPECT_NE(r.out.find("fine"), std::string::npos);
}

TEST(PolicyCli, SchemaPrintsTheKeyTable) {
  CliResult r = run_policy({"schema"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_EQ(r.out, schema_table());
  EXPECT_NE(r.out.find("| `timing.min_reps` | integer |"), std::string::npos) << r.out;
}

TEST(PolicyCli, BadUsageExits2) {
  for (auto args :
       std::vector<std::vector<std::string>>{{}, {"frobnicate"}, {"show", "a", "b"}, {"list", "x"}, {"show", "--all"}, {"schema", "x"}}) {
    CliResult r = run_policy(args);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("usage:"), std::string::npos) << r.err;
  }
  CliResult h = run_policy({"--help"});
  EXPECT_EQ(h.rc, 0);
  EXPECT_NE(h.out.find("usage:"), std::string::npos);
}

}  // namespace
}  // namespace kg::policy

// PolicyProfiles: the four shipped profiles load, and say what docs/policies.md says they do.
#include "policy_test_util.h"

#include <algorithm>

namespace kg::policy {
namespace {

using test::PolicyDirOverride;
using test::TempDir;

TEST(PolicyProfiles, ShippedProfilesAreListed) {
  PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  EXPECT_EQ(profile_names(), (std::vector<std::string>{"audit", "backendbench", "competition", "rl-reward"}));
}

TEST(PolicyProfiles, EveryShippedProfileLoads) {
  PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  for (const auto& n : profile_names()) {
    SCOPED_TRACE(n);
    Policy p;
    ASSERT_NO_THROW(p = load(n));
    EXPECT_EQ(p.name, n);
    EXPECT_FALSE(p.description.empty());
    EXPECT_EQ(p.source, profile_dir() + "/" + n + ".toml");
    // The struct holds the effective settings: every rule and every float dtype is written out.
    EXPECT_EQ(p.rules.size(), known_rules().size());
    for (const auto& d : float_dtypes()) EXPECT_TRUE(p.tolerances.count(d)) << d;
  }
}

TEST(PolicyProfiles, DefaultIsCompetition) {
  PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  EXPECT_STREQ(kDefaultProfile, "competition");
  EXPECT_EQ(load("").name, "competition");
  EXPECT_EQ(load(""), load("competition"));
}

TEST(PolicyProfiles, EveryShippedProfileRejectsOnEveryRule) {
  PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  for (const auto& n : profile_names()) {
    Policy p = load(n);
    for (const auto& r : known_rules()) EXPECT_EQ(p.action_for(r), Action::Reject) << n << " " << r;
  }
}

TEST(PolicyProfiles, CompetitionDtypeTolerancesAreTorchTestingDefaults) {
  PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  Policy p = load("competition");
  EXPECT_EQ(p.tolerances.at("f16"), (Tolerance{1e-5, 1e-3}));
  EXPECT_EQ(p.tolerances.at("bf16"), (Tolerance{1e-5, 1.6e-2}));
  EXPECT_EQ(p.tolerances.at("f32"), (Tolerance{1e-5, 1.3e-6}));
  EXPECT_EQ(p.tolerances.at("f64"), (Tolerance{1e-7, 1e-7}));
  EXPECT_EQ(p.tolerances.at("c64"), (Tolerance{1e-5, 1.3e-6}));
  EXPECT_EQ(p.tolerances.at("c128"), (Tolerance{1e-7, 1e-7}));
  for (const auto& d : float_dtypes()) EXPECT_EQ(p.tolerances.at(d), builtin_tolerance(d)) << d;
}

TEST(PolicyProfiles, CompetitionOverridesAccumulatingOpsOnly) {
  PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  Policy p = load("competition");
  for (const char* op : {"mm.default", "bmm.default", "addmm.default", "convolution.default", "sum.dim_IntList"})
    EXPECT_EQ(p.tolerance_for(op, "f32"), (Tolerance{1e-3, 1e-4})) << op;
  for (const char* op : {"_softmax.default", "mean.dim", "var.correction"})
    EXPECT_EQ(p.tolerance_for(op, "f32"), (Tolerance{1e-5, 1e-4})) << op;
  // Elementwise ops keep torch.testing's defaults, and so does float64 everywhere.
  EXPECT_EQ(p.tolerance_for("add.Tensor", "f32"), (Tolerance{1e-5, 1.3e-6}));
  EXPECT_EQ(p.tolerance_for("relu.default", "f16"), (Tolerance{1e-5, 1e-3}));
  EXPECT_EQ(p.tolerance_for("mm.default", "f64"), (Tolerance{1e-7, 1e-7}));
  // No override is looser than 1e-3 absolute or 2e-3 relative outside bf16's own 1.6e-2.
  for (const auto& [op, per] : p.op_tolerances)
    for (const auto& [d, t] : per) {
      EXPECT_LE(t.atol, 1e-3) << op << " " << d;
      EXPECT_LE(t.rtol, d == "bf16" ? 1.6e-2 : 2e-3) << op << " " << d;
    }
}

TEST(PolicyProfiles, RlRewardIsCompetitionWithLessTime) {
  PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  Policy c = load("competition"), r = load("rl-reward");
  EXPECT_EQ(r.tolerances, c.tolerances);
  EXPECT_EQ(r.op_tolerances, c.op_tolerances);
  EXPECT_EQ(r.rules, c.rules);
  EXPECT_EQ(r.allowed_libraries, c.allowed_libraries);
  EXPECT_LT(r.correctness_trials, c.correctness_trials);
  EXPECT_LT(r.timing_max_reps, c.timing_max_reps);
  EXPECT_LT(r.timing_min_seconds, c.timing_min_seconds);
  EXPECT_LT(r.timing_rotation_mib, c.timing_rotation_mib);
  EXPECT_TRUE(r.timing);
}

TEST(PolicyProfiles, AuditIsCompetitionWithMoreTrials) {
  PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  Policy c = load("competition"), a = load("audit");
  EXPECT_EQ(a.tolerances, c.tolerances);
  EXPECT_EQ(a.op_tolerances, c.op_tolerances);
  EXPECT_EQ(a.rules, c.rules);
  EXPECT_EQ(a.allowed_libraries, c.allowed_libraries);
  EXPECT_GT(a.correctness_trials, c.correctness_trials);
  EXPECT_GT(a.timing_min_reps, c.timing_min_reps);
  EXPECT_GE(a.run_call_time_s, c.run_call_time_s);
}

TEST(PolicyProfiles, BackendBenchIsOneHundredthEverywhere) {
  PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  Policy b = load("backendbench");
  EXPECT_TRUE(b.op_tolerances.empty());
  for (const auto& d : float_dtypes()) EXPECT_EQ(b.tolerance_for("mm.default", d), (Tolerance{1e-2, 1e-2})) << d;
}

TEST(PolicyProfiles, UnknownNameListsTheProfiles) {
  PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  try {
    load("competiton");
    FAIL() << "loaded a profile that does not exist";
  } catch (const PolicyError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("\"competiton\""), std::string::npos) << m;
    EXPECT_NE(m.find("audit, backendbench, competition, rl-reward"), std::string::npos) << m;
  }
}

TEST(PolicyProfiles, MissingFileIsNamed) {
  try {
    load("/nonexistent/dir/mine.toml");
    FAIL();
  } catch (const PolicyError& e) { EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/mine.toml"), std::string::npos) << e.what(); }
}

TEST(PolicyProfiles, ProfileNameWrittenAsFileGetsAHint) {
  PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  try {
    load("rl-reward.toml");  // a path relative to the working directory, not the profile
    FAIL();
  } catch (const PolicyError& e) { EXPECT_NE(std::string(e.what()).find("write \"rl-reward\""), std::string::npos) << e.what(); }
}

TEST(PolicyProfiles, EnvironmentOverridesProfileDir) {
  TempDir t;
  t.write("custom.toml", "description = \"mine\"\n[trials]\ncorrectness = 7\n");
  t.write("notes.txt", "not a profile\n");
  PolicyDirOverride dir(t.path());
  EXPECT_EQ(profile_dir(), t.path());
  EXPECT_EQ(profile_names(), std::vector<std::string>{"custom"});
  Policy p = load("custom");
  EXPECT_EQ(p.name, "custom");  // no `name` key: the file's stem
  EXPECT_EQ(p.correctness_trials, 7);
}

TEST(PolicyProfiles, FileByPath) {
  TempDir t;
  std::string path = t.write("strict-mm.toml", "[op.\"mm.default\".f32]\natol = 0\nrtol = 0\n");
  Policy p = load(path);
  EXPECT_EQ(p.name, "strict-mm");
  EXPECT_EQ(p.source, path);
  EXPECT_EQ(p.tolerance_for("mm.default", "f32"), (Tolerance{0, 0}));
}

TEST(PolicyProfiles, BaseProfileThenDifferences) {
  PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  Policy p = parse(R"(base = "competition"
[rules]
impossible_speed = "flag"
[op."mm.default".f32]
atol = 2e-3
)",
                   "mine.toml");
  Policy c = load("competition");
  EXPECT_EQ(p.name, "mine");
  EXPECT_EQ(p.description, "");  // never inherited: it would describe the base, not this file
  EXPECT_EQ(p.action_for("impossible_speed"), Action::Flag);
  EXPECT_EQ(p.action_for("fallback_to_torch"), Action::Reject);
  // Only atol was set: rtol stays the base's override, not the dtype's.
  EXPECT_EQ(p.tolerance_for("mm.default", "f32"), (Tolerance{2e-3, 1e-4}));
  EXPECT_EQ(p.tolerance_for("bmm.default", "f32"), c.tolerance_for("bmm.default", "f32"));
  EXPECT_EQ(p.correctness_trials, c.correctness_trials);
}

TEST(PolicyProfiles, BaseByRelativePath) {
  TempDir t;
  t.write("parent.toml", "[trials]\ncorrectness = 9\n[timing]\nenabled = false\n");
  std::string child = t.write("child.toml", "base = \"./parent.toml\"\n[timing]\nenabled = true\n");
  Policy p = load(child);
  EXPECT_EQ(p.correctness_trials, 9);
  EXPECT_TRUE(p.timing);
  EXPECT_EQ(p.name, "child");
}

TEST(PolicyProfiles, BaseCycleIsAnError) {
  TempDir t;
  t.write("a.toml", "base = \"./b.toml\"\n");
  std::string b = t.write("b.toml", "base = \"./a.toml\"\n");
  try {
    load(b);
    FAIL();
  } catch (const PolicyError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("cycle"), std::string::npos) << m;
    EXPECT_NE(m.find("key 'base'"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace kg::policy

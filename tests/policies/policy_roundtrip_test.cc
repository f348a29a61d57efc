// PolicyRoundTrip: to_toml() prints settings that parse back to the same Policy, bit for bit.
#include "policy_test_util.h"

#include <cmath>
#include <limits>

namespace kg::policy {
namespace {

void expect_round_trip(const Policy& p) {
  const std::string text = p.to_toml();
  Policy q;
  try {
    q = parse(text, "roundtrip.toml");
  } catch (const PolicyError& e) { FAIL() << e.what() << "\n--- text:\n" << text; }
  EXPECT_TRUE(q == p) << "--- original:\n" << text << "--- reparsed:\n" << q.to_toml();
  q.source = p.source;
  EXPECT_EQ(q.to_toml(), text);  // and the text is a fixed point
}

TEST(PolicyRoundTrip, ShippedProfiles) {
  test::PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  for (const auto& n : profile_names()) {
    SCOPED_TRACE(n);
    expect_round_trip(load(n));
  }
}

TEST(PolicyRoundTrip, AwkwardValues) {
  Policy p = parse("", "awkward.toml");
  p.name = "we\"ird \\ name";
  p.description = "line one\nline two\ttab \x01 control, unicode: \xc3\xa9\xe2\x9c\x93";
  p.tolerances["f32"] = {0.1 + 0.2, 1.0 / 3.0};                          // not short in decimal
  p.tolerances["f64"] = {std::numeric_limits<double>::denorm_min(), 0};  // smallest and zero
  p.tolerances["bf16"] = {1e9, std::nextafter(1e-2, 1.0)};               // the largest tolerance
  p.op_tolerances["_softmax.default"]["f32"] = {1e-5, 1e-4};
  p.op_tolerances["add_.Tensor"]["c64"] = {7, 0.5};
  p.rules["impossible_speed"] = Action::Flag;
  p.rules["no_device_work"] = Action::Off;
  p.allowed_libraries = {"cublas", "cub"};
  p.correctness_trials = 1000;
  p.timing = false;
  p.timing_warmup = 0;
  p.timing_min_reps = 1;
  p.timing_max_reps = 1;
  p.timing_min_seconds = 0;
  p.timing_rotation_mib = 0;
  p.timing_stop_rel_error = 0.5;   // the largest
  p.compile_time_s = 60;           // integral doubles must print as floats
  p.compile_memory_mb = 16777216;  // the largest memory limit
  p.run_call_time_s = 0.001;
  p.run_memory_mb = 123.456;
  p.cache_artifact_mb = 7;
  expect_round_trip(p);
}

TEST(PolicyRoundTrip, HandBuiltPolicyKeepsItsEffect) {
  // A Policy built in code lists nothing; its TOML writes out the effective settings, which
  // parse into a full struct that judges every op and rule the same way.
  Policy p;  // unnamed: the text leaves `name` out and the reader uses the source's stem
  p.op_tolerances["mm.default"]["f32"] = {1e-3, 1e-4};
  Policy q = parse(p.to_toml(), "x.toml");
  EXPECT_EQ(q.name, "x");
  for (const auto& d : float_dtypes()) {
    EXPECT_EQ(q.tolerance_for("mm.default", d), p.tolerance_for("mm.default", d)) << d;
    EXPECT_EQ(q.tolerance_for("add.Tensor", d), p.tolerance_for("add.Tensor", d)) << d;
  }
  for (const auto& r : known_rules()) EXPECT_EQ(q.action_for(r), p.action_for(r)) << r;
}

TEST(PolicyRoundTrip, OutputMentionsEveryRuleAndDtype) {
  test::PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  const std::string text = load("rl-reward").to_toml();
  for (const auto& r : known_rules()) EXPECT_NE(text.find("\n" + r + " = "), std::string::npos) << r;
  for (const auto& d : float_dtypes()) EXPECT_NE(text.find("\n" + d + " = {"), std::string::npos) << d;
  EXPECT_NE(text.find("[op.\"mm.default\"]"), std::string::npos);  // inherited from competition
  EXPECT_EQ(text.find("base ="), std::string::npos);               // effective settings, no indirection
}

}  // namespace
}  // namespace kg::policy

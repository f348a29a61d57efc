// PolicyErrors: every bad profile is a PolicyError naming the file, the line (and column) and
// the key. A typo must never be silently ignored: a profile decides verdicts.
#include "policy_test_util.h"

namespace kg::policy {
namespace {

TEST(PolicyErrors, TomlSyntaxError) {
  // Line 3, the value is cut off after '='.
  EXPECT_POLICY_ERROR("name = \"x\"\n[tolerance.f32]\natol = \n", "bad.toml:3:", "TOML syntax error", "tolerance.f32.atol");
}

TEST(PolicyErrors, TomlSyntaxErrorInHeader) {
  EXPECT_POLICY_ERROR("[rules\nfallback_to_torch = \"reject\"\n", "bad.toml:1:", "TOML syntax error");
}

TEST(PolicyErrors, HeaderWithoutKeyIsASyntaxError) {
  // toml++ 3.3 asserts on this in debug builds unless parse.cc disarms it; must be a clean error.
  EXPECT_POLICY_ERROR("[=x]\n", "bad.toml:1:2:", "TOML syntax error");
  EXPECT_POLICY_ERROR("name = \"x\"\n[ = 1.3e-6 }  tolerance]\n", "bad.toml:2:", "TOML syntax error");
}

TEST(PolicyErrors, DuplicateKeyIsASyntaxError) {
  EXPECT_POLICY_ERROR("[trials]\ncorrectness = 1\ncorrectness = 2\n", "bad.toml:3:", "trials.correctness");
}

TEST(PolicyErrors, UnknownTopLevelKey) {
  EXPECT_POLICY_ERROR("name = \"x\"\n[tolerances.f32]\natol = 1e-5\n", "bad.toml:2:2:", "key 'tolerances'", "unknown key",
                      "did you mean 'tolerance'?");
}

TEST(PolicyErrors, UnknownKeyInTolerance) {
  EXPECT_POLICY_ERROR("[tolerance.f32]\natoll = 1e-5\n", "bad.toml:2:1:", "key 'tolerance.f32.atoll'", "unknown key",
                      "did you mean 'atol'?");
}

TEST(PolicyErrors, UnknownKeyInTiming) {
  EXPECT_POLICY_ERROR("[timing]\nwarmup = 3\nmin_rep = 10\n", "bad.toml:3:1:", "key 'timing.min_rep'", "did you mean 'min_reps'?");
}

TEST(PolicyErrors, UnknownKeyInLimits) {
  EXPECT_POLICY_ERROR("[limits]\ncompile_time = 60\n", "bad.toml:2:1:", "key 'limits.compile_time'", "did you mean 'compile_time_s'?");
}

TEST(PolicyErrors, UnknownKeyInLibrariesAndTrials) {
  EXPECT_POLICY_ERROR("[libraries]\nallow = []\n", "bad.toml:2:1:", "key 'libraries.allow'");
  EXPECT_POLICY_ERROR("[trials]\ncorrect = 2\n", "bad.toml:2:1:", "key 'trials.correct'");
}

TEST(PolicyErrors, WrongTypeString) {
  EXPECT_POLICY_ERROR("[trials]\ncorrectness = \"two\"\n", "bad.toml:2:15:", "key 'trials.correctness'",
                      "expected an integer, got a string");
}

TEST(PolicyErrors, WrongTypeFloatForInteger) {
  EXPECT_POLICY_ERROR("[timing]\nmin_reps = 2.5\n", "bad.toml:2:12:", "key 'timing.min_reps'", "expected an integer, got a float");
}

TEST(PolicyErrors, WrongTypeForNumber) {
  EXPECT_POLICY_ERROR("[tolerance.f16]\natol = \"1e-3\"\n", "bad.toml:2:8:", "key 'tolerance.f16.atol'", "expected a number, got a string");
}

TEST(PolicyErrors, WrongTypeForBoolean) {
  EXPECT_POLICY_ERROR("[timing]\nenabled = 1\n", "bad.toml:2:11:", "key 'timing.enabled'", "expected a boolean");
}

TEST(PolicyErrors, WrongTypeForTable) {
  EXPECT_POLICY_ERROR("rules = \"strict\"\n", "bad.toml:1:9:", "key 'rules'", "expected a table, got a string");
  EXPECT_POLICY_ERROR("[tolerance]\nf32 = 1e-5\n", "bad.toml:2:7:", "key 'tolerance.f32'", "expected a table", "atol = ..., rtol = ...");
}

TEST(PolicyErrors, WrongTypeForName) {
  EXPECT_POLICY_ERROR("name = 3\n", "bad.toml:1:8:", "key 'name'", "expected a string, got an integer");
}

TEST(PolicyErrors, NegativeTolerance) {
  EXPECT_POLICY_ERROR("[tolerance.f32]\natol = 1e-5\nrtol = -1e-6\n", "bad.toml:3:8:", "key 'tolerance.f32.rtol'",
                      "-1e-06 is out of range (0 <= x <= 1e+09)");
  EXPECT_POLICY_ERROR("[op.\"mm.default\".f32]\natol = -1\n", "bad.toml:2:8:", "key 'op.\"mm.default\".f32.atol'",
                      "-1 is out of range (0 <= x");
}

TEST(PolicyErrors, NonFiniteTolerance) {
  EXPECT_POLICY_ERROR("[tolerance.f32]\natol = inf\n", "bad.toml:2:8:", "key 'tolerance.f32.atol'", "finite");
  EXPECT_POLICY_ERROR("[tolerance.f32]\nrtol = nan\n", "bad.toml:2:8:", "key 'tolerance.f32.rtol'", "finite");
}

TEST(PolicyErrors, UnknownRuleId) {
  EXPECT_POLICY_ERROR("[rules]\nfallback_to_torch = \"reject\"\ntrival_output = \"flag\"\n", "bad.toml:3:1:", "key 'rules.trival_output'",
                      "unknown rule id", "did you mean 'trivial_output'?");
}

TEST(PolicyErrors, ShortenedRuleIdIsSuggested) {
  EXPECT_POLICY_ERROR("[rules]\nfallback = \"off\"\n", "bad.toml:2:1:", "key 'rules.fallback'", "did you mean 'fallback_to_torch'?");
}

TEST(PolicyErrors, UnknownAction) {
  EXPECT_POLICY_ERROR("[rules]\nasync_escape = \"warn\"\n", "bad.toml:2:16:", "key 'rules.async_escape'", "unknown action \"warn\"",
                      "\"reject\", \"flag\" or \"off\"");
  EXPECT_POLICY_ERROR("[rules]\nasync_escape = \"Reject\"\n", "bad.toml:2:16:", "unknown action");
  EXPECT_POLICY_ERROR("[rules]\nasync_escape = true\n", "bad.toml:2:16:", "expected a string, got a boolean");
}

TEST(PolicyErrors, UnknownDtype) {
  EXPECT_POLICY_ERROR("[tolerance.float32]\natol = 1e-5\n", "bad.toml:1:", "key 'tolerance.float32'", "unknown dtype 'float32'",
                      "did you mean 'f32'?");
  EXPECT_POLICY_ERROR("[tolerance.fp8]\natol = 1\n", "bad.toml:1:", "unknown dtype 'fp8'");
  EXPECT_POLICY_ERROR("[op.\"mm.default\".f23]\natol = 1\n", "bad.toml:1:", "key 'op.\"mm.default\".f23'", "unknown dtype 'f23'",
                      "did you mean 'f32'?");
}

TEST(PolicyErrors, IntegerDtypeHasNoTolerance) {
  EXPECT_POLICY_ERROR("[tolerance.i64]\natol = 0\n", "bad.toml:1:", "key 'tolerance.i64'", "compared exactly");
}

TEST(PolicyErrors, OpNames) {
  EXPECT_POLICY_ERROR("[op.mm.f32]\natol = 1\n", "bad.toml:1:", "key 'op.mm'", "not an op overload name");
  EXPECT_POLICY_ERROR("[op.\"aten.mm.default\".f32]\natol = 1\n", "bad.toml:1:", "without the namespace", "\"mm.default\"");
  EXPECT_POLICY_ERROR("[op.\"mm.default\"]\natol = 1e-3\n", "bad.toml:2:1:", "op overrides are per dtype");
}

TEST(PolicyErrors, Ranges) {
  EXPECT_POLICY_ERROR("[trials]\ncorrectness = 0\n", "bad.toml:2:15:", "key 'trials.correctness'", "between 1 and");
  EXPECT_POLICY_ERROR("[timing]\nmin_reps = 10\nmax_reps = 5\n", "bad.toml:3:12:", "key 'timing.max_reps'", "below min_reps");
  EXPECT_POLICY_ERROR("[limits]\nrun_memory_mb = 0\n", "bad.toml:2:17:", "key 'limits.run_memory_mb'", "0 is out of range (1 <= x");
  EXPECT_POLICY_ERROR("[timing]\nmin_seconds = -0.5\n", "bad.toml:2:15:", "key 'timing.min_seconds'", "-0.5 is out of range (0 <= x");
  EXPECT_POLICY_ERROR("[timing]\nrotation_mib = -1\n", "bad.toml:2:16:", "key 'timing.rotation_mib'", "between 0 and");
  EXPECT_POLICY_ERROR("[limits]\ncache_artifact_mb = 0\n", "bad.toml:2:21:", "key 'limits.cache_artifact_mb'", "between 1 and");
  EXPECT_POLICY_ERROR("[trials]\ncorrectness = 99999999999\n", "bad.toml:2:15:", "between 1 and");
  EXPECT_POLICY_ERROR("name = \"\"\n", "bad.toml:1:8:", "key 'name'", "must not be empty");
}

TEST(PolicyErrors, Libraries) {
  EXPECT_POLICY_ERROR("[libraries]\nallowed = \"cublas\"\n", "bad.toml:2:11:", "key 'libraries.allowed'", "expected an array");
  EXPECT_POLICY_ERROR("[libraries]\nallowed = [\"cublas\", \"cudnnn\"]\n", "bad.toml:2:22:", "key 'libraries.allowed[1]'",
                      "unknown library \"cudnnn\"", "did you mean 'cudnn'?");
  EXPECT_POLICY_ERROR("[libraries]\nallowed = [\"cub\", \"cub\"]\n", "bad.toml:2:19:", "listed twice");
  EXPECT_POLICY_ERROR("[libraries]\nallowed = [1]\n", "bad.toml:2:12:", "expected a string");
}

TEST(PolicyErrors, BaseErrors) {
  EXPECT_POLICY_ERROR("base = \"no-such-profile\"\n", "bad.toml:1:8:", "key 'base'", "no policy profile named");
  EXPECT_POLICY_ERROR("base = 1\n", "bad.toml:1:8:", "key 'base'", "expected a string");
}

TEST(PolicyErrors, ErrorInBaseNamesBothFiles) {
  test::TempDir t;
  t.write("parent.toml", "[trials]\ncorrectnes = 2\n");
  std::string child = t.write("child.toml", "base = \"./parent.toml\"\n");
  try {
    load(child);
    FAIL();
  } catch (const PolicyError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(child + ":1:8: key 'base'"), std::string::npos) << m;
    EXPECT_NE(m.find("parent.toml:2:1: key 'trials.correctnes'"), std::string::npos) << m;
  }
}

TEST(PolicyErrors, FileErrorsNameTheFileFromLoad) {
  test::TempDir t;
  std::string path = t.write("typo.toml", "name = \"typo\"\n\n[rules]\nreplayed_outptu = \"reject\"\n");
  try {
    load(path);
    FAIL();
  } catch (const PolicyError& e) { EXPECT_EQ(std::string(e.what()).rfind(path + ":4:1: key 'rules.replayed_outptu'", 0), 0u) << e.what(); }
  try {
    load(t.path() + "/");
    FAIL();
  } catch (const PolicyError& e) { EXPECT_NE(std::string(e.what()).find("directory"), std::string::npos) << e.what(); }
}

}  // namespace
}  // namespace kg::policy

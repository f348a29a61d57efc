// PolicyLookup: tolerance_for's precedence (op override > dtype > built-in default), actions.
#include "policy_test_util.h"

namespace kg::policy {
namespace {

TEST(PolicyLookup, BuiltinDefaultsAreTorchTesting) {
  EXPECT_EQ(builtin_tolerance("f16"), (Tolerance{1e-5, 1e-3}));
  EXPECT_EQ(builtin_tolerance("bf16"), (Tolerance{1e-5, 1.6e-2}));
  EXPECT_EQ(builtin_tolerance("f32"), (Tolerance{1e-5, 1.3e-6}));
  EXPECT_EQ(builtin_tolerance("f64"), (Tolerance{1e-7, 1e-7}));
  EXPECT_EQ(builtin_tolerance("c32"), builtin_tolerance("f16"));
  EXPECT_EQ(builtin_tolerance("c64"), builtin_tolerance("f32"));
  EXPECT_EQ(builtin_tolerance("c128"), builtin_tolerance("f64"));
}

TEST(PolicyLookup, IntegersBoolsAndUnknownDtypesAreExact) {
  for (const char* d : {"i64", "i32", "u8", "b8", "f8e4m3fn", "float32", ""}) EXPECT_EQ(builtin_tolerance(d), (Tolerance{0, 0})) << d;
  Policy p;  // nothing set: still exact
  EXPECT_EQ(p.tolerance_for("add.Tensor", "i64"), (Tolerance{0, 0}));
}

TEST(PolicyLookup, PrecedenceOpThenDtypeThenBuiltin) {
  Policy p;
  // Nothing set: built-in default.
  EXPECT_EQ(p.tolerance_for("mm.default", "f32"), builtin_tolerance("f32"));
  // A dtype setting wins over the built-in default, for every op.
  p.tolerances["f32"] = {2e-5, 3e-6};
  EXPECT_EQ(p.tolerance_for("mm.default", "f32"), (Tolerance{2e-5, 3e-6}));
  EXPECT_EQ(p.tolerance_for("add.Tensor", "f32"), (Tolerance{2e-5, 3e-6}));
  // An op override wins over the dtype, for that op and dtype only.
  p.op_tolerances["mm.default"]["f32"] = {1e-3, 1e-4};
  EXPECT_EQ(p.tolerance_for("mm.default", "f32"), (Tolerance{1e-3, 1e-4}));
  EXPECT_EQ(p.tolerance_for("add.Tensor", "f32"), (Tolerance{2e-5, 3e-6}));
  EXPECT_EQ(p.tolerance_for("mm.default", "f16"), builtin_tolerance("f16"));
  EXPECT_EQ(p.tolerance_for("mm.out", "f32"), (Tolerance{2e-5, 3e-6}));  // overloads are distinct
}

TEST(PolicyLookup, OpNamesWithNamespaceFindTheOverride) {
  Policy p;
  p.op_tolerances["sum.dim_IntList"]["f32"] = {1e-3, 1e-4};
  EXPECT_EQ(p.tolerance_for("aten::sum.dim_IntList", "f32"), (Tolerance{1e-3, 1e-4}));
  EXPECT_EQ(p.tolerance_for("aten.sum.dim_IntList", "f32"), (Tolerance{1e-3, 1e-4}));
  // The dispatcher's spelling of a default overload.
  p.op_tolerances["mm.default"]["f32"] = {2e-3, 2e-4};
  EXPECT_EQ(p.tolerance_for("aten::mm", "f32"), (Tolerance{2e-3, 2e-4}));
  EXPECT_EQ(p.tolerance_for("mm", "f32"), (Tolerance{2e-3, 2e-4}));
  EXPECT_EQ(p.tolerance_for("aten::mm.out", "f32"), builtin_tolerance("f32"));
}

TEST(PolicyLookup, ParsedPrecedence) {
  Policy p = parse(R"(
[tolerance.f32]
rtol = 1e-5
[op."_softmax.default".f32]
atol = 1e-6
)",
                   "t.toml");
  // Unset atol of the dtype keeps the built-in default; unset rtol of the op inherits the dtype's.
  EXPECT_EQ(p.tolerance_for("add.Tensor", "f32"), (Tolerance{1e-5, 1e-5}));
  EXPECT_EQ(p.tolerance_for("_softmax.default", "f32"), (Tolerance{1e-6, 1e-5}));
  EXPECT_EQ(p.tolerance_for("_softmax.default", "bf16"), builtin_tolerance("bf16"));
}

TEST(PolicyLookup, ActionsDefaultToReject) {
  Policy p;
  for (const auto& r : known_rules()) EXPECT_EQ(p.action_for(r), Action::Reject) << r;
  EXPECT_EQ(p.action_for("not_a_rule"), Action::Reject);  // unknown is never weaker
}

TEST(PolicyLookup, ParsedActions) {
  Policy p = parse(R"(
[rules]
impossible_speed = "flag"
no_device_work = "off"
fallback_to_torch = "reject"
)",
                   "t.toml");
  EXPECT_EQ(p.action_for("impossible_speed"), Action::Flag);
  EXPECT_EQ(p.action_for("no_device_work"), Action::Off);
  EXPECT_EQ(p.action_for("fallback_to_torch"), Action::Reject);
  EXPECT_EQ(p.action_for("trivial_output"), Action::Reject);
}

TEST(PolicyLookup, ActionNames) {
  EXPECT_STREQ(action_name(Action::Reject), "reject");
  EXPECT_STREQ(action_name(Action::Flag), "flag");
  EXPECT_STREQ(action_name(Action::Off), "off");
}

TEST(PolicyLookup, KnownRulesAreThreatsSectionB) {
  const auto& r = known_rules();
  EXPECT_EQ(r.size(), 16u);
  for (const char* id : {"fallback_to_torch", "forbidden_library", "trivial_output", "unwritten_output", "input_mutated", "replayed_output",
                         "stateful_output", "nondeterministic_output", "async_escape", "impossible_speed", "timer_tampering",
                         "cache_tampering", "shape_specialisation", "no_device_work", "protocol_violation", "sandbox_violation"})
    EXPECT_NE(std::find(r.begin(), r.end(), id), r.end()) << id;
}

TEST(PolicyLookup, EmptyFileIsTheBuiltinDefaults) {
  Policy p = parse("", "empty.toml");
  Policy d;
  EXPECT_EQ(p.name, "empty");
  EXPECT_EQ(p.correctness_trials, d.correctness_trials);
  EXPECT_EQ(p.timing_max_reps, d.timing_max_reps);
  EXPECT_EQ(p.compile_time_s, d.compile_time_s);
  EXPECT_TRUE(p.allowed_libraries.empty());
  for (const auto& dt : float_dtypes()) EXPECT_EQ(p.tolerance_for("x.y", dt), builtin_tolerance(dt));
}

TEST(PolicyLookup, AllSectionsParsed) {
  Policy p = parse(R"(
name = "n"
description = "d"
[libraries]
allowed = ["cublas", "cub"]
[trials]
correctness = 3
[timing]
enabled = false
warmup = 0
min_reps = 5
max_reps = 5
min_seconds = 0
rotation_mib = 7
[limits]
compile_time_s = 30
compile_memory_mb = 1024.5
run_call_time_s = 2.5
run_memory_mb = 512
)",
                   "x.toml");
  EXPECT_EQ(p.name, "n");
  EXPECT_EQ(p.description, "d");
  EXPECT_EQ(p.allowed_libraries, (std::vector<std::string>{"cublas", "cub"}));
  EXPECT_EQ(p.correctness_trials, 3);
  EXPECT_FALSE(p.timing);
  EXPECT_EQ(p.timing_warmup, 0);
  EXPECT_EQ(p.timing_min_reps, 5);
  EXPECT_EQ(p.timing_max_reps, 5);
  EXPECT_EQ(p.timing_min_seconds, 0.0);
  EXPECT_EQ(p.timing_rotation_mib, 7);
  EXPECT_EQ(p.compile_time_s, 30.0);
  EXPECT_EQ(p.compile_memory_mb, 1024.5);
  EXPECT_EQ(p.run_call_time_s, 2.5);
  EXPECT_EQ(p.run_memory_mb, 512.0);
}

}  // namespace
}  // namespace kg::policy

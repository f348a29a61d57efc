// The policy schema table (policy_schema.h) and the docs table made from it.
#include "policy_schema.h"

#include <algorithm>

namespace kg::policy::schema {
namespace {

// Times: the sandbox turns a wall limit into a nanosecond deadline and a CPU limit into an
// rlimit; an hour per build or per call keeps every product of them (timing budgets of
// run_call_time_s x calls) far inside int64 nanoseconds.
constexpr NumberRange kTimeLimitRange{0, true, 3600, "a limit of zero would fail every submission; at most an hour"};
// MiB: at least 1 (a fraction truncates to 0 MiB, which would mean no limit at all), at most
// 16 TiB (the byte count, MiB << 20, stays far inside 64 bits).
constexpr NumberRange kMemoryLimitRange{1, false, double(int64_t{1} << 24), "at least 1 MiB, at most 16 TiB (16777216 MiB)"};
constexpr NumberRange kRewardWeightRange{-1, false, 1000, "-1 (the preset's own value) to 1000; any negative means the preset's"};
constexpr NumberRange kContextFactorRange{0, false, 1e6, "0 (off) or a factor, at most 1e6"};
constexpr NumberRange kContextFloorRange{0, false, 1e9, "units of the dtype's epsilon, 0 to 1e9"};
constexpr NumberRange kMinSecondsRange{0, false, 3600, "a duration, at most an hour"};
constexpr NumberRange kStopRelErrorRange{0, false, 0.5, "0 (off) or a fraction of the median, at most 0.5"};

Field text(const char* section, const char* key, std::string Policy::*m, const char* doc) {
  Field f{section, key, Type::String, m};
  f.doc = doc;
  return f;
}

Field boolean(const char* section, const char* key, bool Policy::*m, const char* doc) {
  Field f{section, key, Type::Boolean, m};
  f.doc = doc;
  return f;
}

Field integer(const char* section, const char* key, int Policy::*m, int64_t min, int64_t max, const char* doc) {
  Field f{section, key, Type::Integer, m};
  f.min = min, f.max = max, f.doc = doc;
  return f;
}

Field number(const char* section, const char* key, double Policy::*m, NumberRange range, const char* doc) {
  Field f{section, key, Type::Number, m};
  f.range = range, f.doc = doc;
  return f;
}

// A field with its own reader and writer; `type_doc`, `values`, `default_doc` and `doc` are its docs row.
Field custom(Type type, const char* section, const char* key, Member m, ReadFn read, WriteFn write, const char* type_doc, TextFn values,
             const char* default_doc, const char* doc) {
  Field f{section, key, type, m};
  f.read = read, f.write = write;
  f.type_doc = type_doc, f.values_doc = values, f.default_doc = default_doc, f.doc = doc;
  return f;
}

Field check(const char* section, CheckFn fn) {
  Field f{section, "", Type::Check, std::monostate{}};
  f.check = fn;
  return f;
}

std::string reward_preset_values() {
  std::string out;
  for (const RewardPreset& r : reward_presets()) out += (out.empty() ? "" : "; ") + std::string(r.name) + ": " + r.formula;
  return out;
}

std::string base_values() { return "a shipped profile's name, or a path relative to this file"; }
std::string name_values() { return "non-empty"; }
std::string dtype_values() { return "dtype: " + comma_list(float_dtypes()) + "; atol, rtol: " + describe(kToleranceRange); }
std::string op_values() {
  return "the overload as trace files write it, without the namespace (\"mm.default\", \"add_.Tensor\"); "
         "dtypes and numbers as for `tolerance`";
}
std::string rule_values() { return "\"reject\", \"flag\", \"off\"; rule ids: " + comma_list(known_rules()); }
std::string library_values() { return comma_list(known_libraries()) + "; no duplicates"; }

}  // namespace

const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
      custom(Type::Start, "", "base", std::monostate{}, nullptr, nullptr, "string", base_values, "none",
             "Start from another profile's effective settings, then apply this file on top; without a base, "
             "a file starts from the built-in defaults. A cycle is an error."),
      custom(Type::Custom, "", "name", &Policy::name, read_name, write_name, "string", name_values, "the file's name without .toml",
             "The profile's name. Not inherited from the base."),
      text("", "description", &Policy::description, "One line for `kernelgate policy list`. Not inherited from the base."),

      custom(Type::Map, "tolerance", "<dtype>", &Policy::tolerances, read_tolerances, write_tolerances, "table { atol, rtol }",
             dtype_values, "torch.testing's value for the dtype",
             "An output passes when |candidate - reference| <= atol + rtol * |reference|, element by element. "
             "A field left out keeps the inherited value. Integer and bool dtypes are always compared exactly "
             "and may not be listed."),
      custom(Type::Map, "op", "\"<overload>\".<dtype>", &Policy::op_tolerances, read_op_tolerances, write_op_tolerances,
             "table { atol, rtol }", op_values, "none",
             "A per-op override, looked up before `tolerance`. A field left out keeps the base profile's "
             "override for the op, else the dtype's tolerance."),
      number("context_tolerance", "factor", &Policy::context_factor, kContextFactorRange,
             "0: off. Else a floating output passes when its largest error against the op's float64 result is "
             "at most factor times eager's own on the same sample (or the floor, when larger), instead of by "
             "atol/rtol: ill-conditioned samples do not fail honest kernels, well-conditioned ones do not hide "
             "bugs under a loose tolerance. Ops with no float64 result keep atol/rtol."),
      number("context_tolerance", "floor", &Policy::context_floor, kContextFloorRange,
             "The least allowed error under `factor`, in units of the output dtype's epsilon at the float64 "
             "result's largest magnitude (an exact eager would otherwise allow nothing)."),
      number("train", "loss_atol", &Policy::train_loss_atol, kToleranceRange,
             "`kernelgate train-check`: a step is inside the band when its loss with the submission's kernels is "
             "within loss_atol + loss_rtol * |eager's loss| of eager's loss (the same model, seed and data)."),
      number("train", "loss_rtol", &Policy::train_loss_rtol, kToleranceRange, "See loss_atol."),
      integer("train", "steps", &Policy::train_steps, 1, 100000, "Training steps of each train-check run when --steps is not given."),
      custom(Type::Map, "rules", "<rule id>", &Policy::rules, read_rules, write_rules, "string", rule_values, "\"reject\"",
             "reject: the op (and the submission) fails, with the rule's evidence; flag: the evidence is "
             "reported, the verdict is not changed; off: the check's result is ignored. An unknown id is an error."),
      custom(Type::Custom, "libraries", "allowed", &Policy::allowed_libraries, read_allowed_libraries, write_allowed_libraries,
             "array of strings", library_values, "[] (none)",
             "The vendor libraries the submission may use; replaces the base's list. Any library not listed "
             "is a forbidden_library violation when the submission uses it."),

      integer("trials", "correctness", &Policy::correctness_trials, 1, 1000,
              "Times each sample is run on fresh inputs; more trials catch kernels that replay outputs or "
              "keep state across calls."),

      boolean("timing", "enabled", &Policy::timing, "false: correctness only, no speedup reported."),
      integer("timing", "warmup", &Policy::timing_warmup, 0, 1000000, "Untimed calls before timing."),
      integer("timing", "min_reps", &Policy::timing_min_reps, 1, 10000000, "Timed calls per sample, at least ..."),
      integer("timing", "max_reps", &Policy::timing_max_reps, 1, 10000000, "... and at most (never below min_reps) ..."),
      number("timing", "min_seconds", &Policy::timing_min_seconds, kMinSecondsRange,
             "... adding calls until this much time (seconds) is measured."),
      integer("timing", "rotation_mib", &Policy::timing_rotation_mib, 0, 1 << 20,
              "Fresh input values (MiB over all value sets) for the warm-up and timed calls; the timed calls "
              "are cut to the fresh sets, never below min_reps (docs/verdicts.md, \"Timing\")."),
      number("timing", "stop_rel_error", &Policy::timing_stop_rel_error, kStopRelErrorRange,
             "0: every timed call the count above asks for. Otherwise each side's timed calls of a sample stop early, "
             "never below min_reps, once their median is known to within +- this fraction of itself at 95% confidence "
             "(a distribution-free interval; docs/verdicts.md, \"Timing\")."),
      check("timing", check_reps_order),

      custom(Type::Custom, "reward", "preset", &Policy::reward_preset, read_reward_preset, write_reward_preset, "string",
             reward_preset_values, "\"kevin\"", "The reward formula `kernelgate serve` answers with (docs/serve.md)."),
      number("reward", "correct_weight", &Policy::reward_correct_weight, kRewardWeightRange,
             "Weight of correctness in the formula (negative: the preset's own)."),
      number("reward", "speedup_weight", &Policy::reward_speedup_weight, kRewardWeightRange,
             "Weight of the speedup term (negative: the preset's own)."),
      number("reward", "speedup_cap", &Policy::reward_speedup_cap, kRewardWeightRange,
             "The speedup is clipped to at most this (negative: the preset's own)."),
      number("reward", "rule_penalty", &Policy::reward_rule_penalty, kRewardWeightRange,
             "Subtracted from the score when a rule the profile rejects on fired (negative: the preset's own)."),

      number("limits", "compile_time_s", &Policy::compile_time_s, kTimeLimitRange, "Wall time for one build (g++/nvcc/NVRTC), seconds."),
      number("limits", "compile_memory_mb", &Policy::compile_memory_mb, kMemoryLimitRange, "Memory for the build child, MiB."),
      number("limits", "run_call_time_s", &Policy::run_call_time_s, kTimeLimitRange, "Wall time for one call into the runner, seconds."),
      number("limits", "run_memory_mb", &Policy::run_memory_mb, kMemoryLimitRange, "Memory for the run child, MiB."),
      integer("limits", "cache_artifact_mb", &Policy::cache_artifact_mb, 1, 1 << 20,
              "A build output larger than this (MiB) is used once and not kept in the build cache (a build "
              "note says so)."),
  };
  return table;
}

std::vector<std::string> keys_in(const std::string& section) {
  std::vector<std::string> keys;
  auto add = [&keys](const std::string& k) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  };
  for (const Field& f : fields()) {
    if (f.type == Type::Check) continue;
    if (section.empty()) add(*f.section ? f.section : f.key);
    else if (f.section == section && f.type != Type::Map) add(f.key);
  }
  return keys;
}

const std::vector<ToleranceField>& tolerance_fields() {
  static const std::vector<ToleranceField> table = {{"atol", &Tolerance::atol}, {"rtol", &Tolerance::rtol}};
  return table;
}

}  // namespace kg::policy::schema

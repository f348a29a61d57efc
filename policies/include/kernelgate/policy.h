// kernelgate policies: the settings a verdict is judged under, read from TOML profiles.
//
// A profile is a TOML file (policies/profiles/NAME.toml ships `competition`, `rl-reward`,
// `audit`, `backendbench`). Every setting lives in the Policy struct below, parsed once; a bad
// file is a PolicyError naming file, line and key. The keys, their types, ranges and defaults are
// one table in the library (schema_table() prints it; docs/policies.md carries it).
#pragma once

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kg::policy {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// What happens when a rule fires.
enum class Action { Reject, Flag, Off };
const char* action_name(Action a);

struct Policy {
  std::string name;    // profile name ("competition") or the file's stem
  std::string source;  // the file it was read from
  std::string description;

  // Per-dtype tolerances keyed by short dtype name: f16, bf16, f32, f64, c64, c128, ...
  // Integers and bools are always compared exactly and are not listed.
  std::map<std::string, Tolerance> tolerances;
  // Per-op overrides: op overload name ("_softmax.default") -> dtype -> tolerance.
  std::map<std::string, std::map<std::string, Tolerance>> op_tolerances;

  // Context-aware tolerance (docs/verdicts.md, "Context-aware tolerance"); factor 0 = off. On, a
  // floating output is judged against the op's float64 result instead of by atol/rtol: it passes
  // when its largest error is at most `context_factor` times eager's own largest error on the same
  // sample, or `context_floor` units of its dtype at the result's largest magnitude when that is
  // larger. Ops without a float64 result keep atol/rtol.
  double context_factor = 0;
  double context_floor = 4;

  // train-check (docs/training.md): a step is inside the band when |loss with the submission's
  // kernels - eager's loss| <= train_loss_atol + train_loss_rtol * |eager's loss|.
  double train_loss_atol = 1e-4;
  double train_loss_rtol = 1e-5;
  int train_steps = 32;  // when --steps is not given

  // Rule id (catalogue.h, docs/threats.md) -> action. Rules not listed default to Reject.
  std::map<std::string, Action> rules;

  // Vendor libraries the submission may use (e.g. "cublas"); everything else is forbidden.
  std::vector<std::string> allowed_libraries;

  // Trials and timing.
  int correctness_trials = 1;  // times each sample is re-run (fresh inputs) for stateful/replay checks
  int timing_warmup = 3;
  int timing_min_reps = 10;
  int timing_max_reps = 200;
  double timing_min_seconds = 0.05;  // adaptive repetition: at least this much measured time per sample
  // Fresh input values for the warm-up and timed calls, in MiB across the value sets: no timed
  // call sees values an earlier call saw while its inputs times (warmup + min_reps) fit.
  int timing_rotation_mib = 512;
  // Timed calls stop before the count above once the median of at least min_reps of them is
  // within +-this fraction of itself at 95% confidence (kernelgate/timing_stop.h); 0: never.
  double timing_stop_rel_error = 0;
  bool timing = true;

  // Rewards (`kernelgate serve`, docs/serve.md): `reward_preset` names the formula; a negative
  // weight, cap or penalty means the preset's own value (reward_presets()).
  std::string reward_preset = "kevin";
  double reward_correct_weight = -1;
  double reward_speedup_weight = -1;
  double reward_speedup_cap = -1;
  double reward_rule_penalty = -1;

  // Limits for the children.
  double compile_time_s = 60;
  double compile_memory_mb = 4096;
  double run_call_time_s = 20;  // per call to the runner
  double run_memory_mb = 8192;
  int cache_artifact_mb = 64;  // a build output larger than this is used once, not cached

  // Tolerance for `op` on dtype `dtype` (short name): op override, then dtype default,
  // then a built-in default no looser than PyTorch's testing defaults. `op` is the overload as
  // profiles write it ("mm.default"); "aten::mm.default", "aten.mm.default" and the dispatcher's
  // "aten::mm" (default overload) find the same entry. Unknown dtypes are compared exactly.
  Tolerance tolerance_for(const std::string& op, const std::string& dtype) const;
  Action action_for(const std::string& rule) const;

  // The effective settings as TOML text (what `kernelgate policy show` prints).
  std::string to_toml() const;
};

// Equality of settings: every field except `source` (where the settings were read from is not a
// setting). parse(p.to_toml(), any) == p for every parsed p.
bool operator==(const Tolerance& a, const Tolerance& b);
bool operator!=(const Tolerance& a, const Tolerance& b);
bool operator==(const Policy& a, const Policy& b);
bool operator!=(const Policy& a, const Policy& b);

struct PolicyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The directory holding the shipped profiles (compiled in; KERNELGATE_POLICY_DIR overrides).
std::string profile_dir();
// Names of the shipped profiles.
std::vector<std::string> profile_names();
// `name_or_file`: a shipped profile name, or a path to a .toml file. Throws PolicyError.
Policy load(const std::string& name_or_file);
// Parses TOML text (at most kMaxPolicyBytes); `source` names it in errors. Throws PolicyError.
Policy parse(const std::string& text, const std::string& source);
// Every key a profile may set, as the markdown table docs/policies.md carries
// (`kernelgate policy schema` prints it).
std::string schema_table();

// The catalogue's rule ids (catalogue.h) in its order, for validating and printing profiles.
const std::vector<std::string>& known_rules();

// The largest policy file `load` reads; it must be a regular file (no FIFO, device or directory).
inline constexpr std::size_t kMaxPolicyBytes = std::size_t{1} << 20;

// The profile `load("")` and `kernelgate policy show` use when none is named.
inline constexpr const char* kDefaultProfile = "competition";
// Short names of the floating dtypes a profile may set tolerances for (f16, bf16, f32, f64, c32,
// c64, c128). Integer and bool dtypes (i8..i64, u8..u64, b8) are compared exactly.
const std::vector<std::string>& float_dtypes();
// PyTorch's torch.testing defaults for a float dtype; {0, 0} (exact) for any other name.
Tolerance builtin_tolerance(const std::string& dtype);
// The reward formulas `[reward] preset` names, with their own weights (docs/serve.md).
struct RewardPreset {
  const char* name;
  double correct_weight, speedup_weight, speedup_cap, rule_penalty;
  const char* formula;  // as the docs and `kernelgate policy schema` show it
};
const std::vector<RewardPreset>& reward_presets();

// Library names `[libraries] allowed` accepts (cublas, cudnn, ...), for validating profiles.
const std::vector<std::string>& known_libraries();

}  // namespace kg::policy

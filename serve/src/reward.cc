// Rewards: the policy's preset formula over the components of a task's result.
#include "reward.h"

#include "kernelgate/op_fields.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kg::serve {
namespace {

const policy::RewardPreset& preset_named(const std::string& name) {
  for (const auto& p : policy::reward_presets())
    if (name == p.name) return p;
  throw std::runtime_error("unknown reward preset \"" + name + "\"");
}

double chosen(double set, double preset) { return set < 0 ? preset : set; }

}  // namespace

nlohmann::json reward_of(const nlohmann::json& ops, const policy::Policy& policy) {
  const policy::RewardPreset& preset = preset_named(policy.reward_preset);
  const double w_correct = chosen(policy.reward_correct_weight, preset.correct_weight);
  const double w_speedup = chosen(policy.reward_speedup_weight, preset.speedup_weight);
  const double cap = std::max(1.0, chosen(policy.reward_speedup_cap, preset.speedup_cap));
  const double penalty = chosen(policy.reward_rule_penalty, preset.rule_penalty);

  // The summaries' reading of the ops: the same verdict order and rule list as summary.json's.
  const std::vector<results::OpFields> fields = results::op_fields_of(ops);
  const std::string verdict = results::submission_verdict(fields);
  const std::vector<std::string> rules = results::submission_rules(fields);
  const bool correct = verdict == "pass";
  // Built: every op was judged (none an error) and none failed to compile.
  bool compiled = !fields.empty(), all_timed = !fields.empty();
  long passed = 0;
  double log_sum = 0;
  for (const results::OpFields& op : fields) {
    if (op.verdict == "pass") ++passed;
    if (op.verdict == "error" || op.failure_categories.count("compile_error")) compiled = false;
    if (op.speedup && *op.speedup > 0) log_sum += std::log(*op.speedup);
    else all_timed = false;
  }
  nlohmann::json speedup = nullptr;
  if (correct && all_timed) speedup = std::exp(log_sum / static_cast<double>(fields.size()));
  double term = 0;
  if (!speedup.is_null()) {
    const double s = speedup.get<double>();
    term = preset.name == std::string("log-speedup") ? std::log(std::clamp(s, 1.0 / cap, cap)) : std::clamp(s, 0.0, cap);
  }
  double score = w_correct * (correct ? 1.0 : 0.0) + w_speedup * term;
  const bool penalised = !rules.empty() && verdict == "rejected";
  if (penalised) score -= penalty;
  return {{"score", score},
          {"preset", preset.name},
          {"formula", preset.formula},
          {"weights", {{"correct_weight", w_correct}, {"speedup_weight", w_speedup}, {"speedup_cap", cap}, {"rule_penalty", penalty}}},
          {"compiled", compiled ? 1 : 0},
          {"correct", correct ? 1 : 0},
          {"correct_fraction", fields.empty() ? 0.0 : static_cast<double>(passed) / static_cast<double>(fields.size())},
          {"speedup", speedup},
          {"rules", rules},
          {"rule_penalty_applied", penalised},
          {"verdict", verdict}};
}

}  // namespace kg::serve

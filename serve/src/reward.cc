// Rewards: the policy's preset formula over the components of a task's result.
#include "reward.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

namespace kg::serve {
namespace {

int verdict_rank(const std::string& v) {
  if (v == "rejected") return 3;
  if (v == "error") return 2;
  if (v == "fail") return 1;
  return 0;
}

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

  bool compiled = !ops.empty(), correct = !ops.empty(), all_timed = !ops.empty();
  int passed = 0;
  double log_sum = 0;
  std::set<std::string> rules;
  std::string verdict = ops.empty() ? "error" : "pass";
  for (const auto& op : ops) {
    const std::string v = op.value("verdict", "error");
    if (verdict_rank(v) > verdict_rank(verdict)) verdict = v;
    if (v == "pass") ++passed;
    else correct = false;
    // Built: no compile_error among the op's failures, and the op was judged at all.
    if (v == "error") compiled = false;
    if (op.contains("failures"))
      for (const auto& f : op["failures"])
        if (f.value("category", "") == "compile_error") compiled = false;
    if (op.contains("violations"))
      for (const auto& vio : op["violations"])
        if (vio.contains("rule") && vio["rule"].is_string()) rules.insert(vio["rule"].get<std::string>());
    if (op.contains("speedup") && op["speedup"].is_number() && op["speedup"].get<double>() > 0)
      log_sum += std::log(op["speedup"].get<double>());
    else all_timed = false;
  }
  nlohmann::json speedup = nullptr;
  if (correct && all_timed) speedup = std::exp(log_sum / static_cast<double>(ops.size()));
  const double c = correct ? 1.0 : 0.0;
  const double s = speedup.is_null() ? 0.0 : speedup.get<double>();
  double term = 0;
  if (correct && !speedup.is_null()) {
    if (preset.name == std::string("log-speedup")) term = std::log(std::clamp(s, 1.0 / cap, cap));
    else term = std::clamp(s, 0.0, cap);
  }
  double score = w_correct * c + w_speedup * term;
  const bool penalised = !rules.empty() && verdict == "rejected";
  if (penalised) score -= penalty;
  return {{"score", score},
          {"preset", preset.name},
          {"formula", preset.formula},
          {"weights", {{"correct_weight", w_correct}, {"speedup_weight", w_speedup}, {"speedup_cap", cap}, {"rule_penalty", penalty}}},
          {"compiled", compiled ? 1 : 0},
          {"correct", correct ? 1 : 0},
          {"correct_fraction", ops.empty() ? 0.0 : static_cast<double>(passed) / static_cast<double>(ops.size())},
          {"speedup", speedup},
          {"rules", std::vector<std::string>(rules.begin(), rules.end())},
          {"rule_penalty_applied", penalised},
          {"verdict", verdict}};
}

}  // namespace kg::serve

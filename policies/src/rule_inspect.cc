// inspect_artifact: runs the static rules on one artifact, in a fixed order, skipping the rules
// the policy turns off. The rules themselves live one per file (rule_<id>.cc).
#include "kernelgate/rules.h"

#include "kernelgate/catalogue.h"

namespace kg::policy {

std::vector<Finding> inspect_artifact(const ArtifactInfo& info, const Policy& policy, const std::string& op) {
  std::vector<Finding> out;
  auto run = [&](Rule rule, const std::string& evidence) {
    if (evidence.empty() || policy.action_for(rule_id(rule)) == Action::Off) return;
    out.push_back({rule, info.path + ": " + evidence});
  };
  run(Rule::FallbackToTorch, rule_fallback_to_torch(info, op));
  run(Rule::ForbiddenLibrary, rule_forbidden_library(info, policy));
  run(Rule::TimerTampering, rule_timer_tampering(info));
  run(Rule::CacheTampering, rule_cache_tampering(info));
  run(Rule::ShapeSpecialisation, rule_shape_specialisation(info));
  return out;
}

}  // namespace kg::policy

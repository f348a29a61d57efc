// inspect_artifact: runs the static rules on one artifact, in a fixed order, skipping the rules
// the policy turns off. The rules themselves live one per file (rule_<id>.cc).
#include "kernelgate/rules.h"

namespace kg::policy {

std::vector<Finding> inspect_artifact(const ArtifactInfo& info, const Policy& policy, const std::string& op) {
  std::vector<Finding> out;
  auto run = [&](const char* rule, const std::string& evidence) {
    if (evidence.empty() || policy.action_for(rule) == Action::Off) return;
    out.push_back({rule, info.path + ": " + evidence});
  };
  run("fallback_to_torch", rule_fallback_to_torch(info, op));
  run("forbidden_library", rule_forbidden_library(info, policy));
  run("timer_tampering", rule_timer_tampering(info));
  run("cache_tampering", rule_cache_tampering(info));
  run("shape_specialisation", rule_shape_specialisation(info));
  return out;
}

}  // namespace kg::policy

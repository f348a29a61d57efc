// Internal to kg_policies: what parse.cc and profiles.cc share. Not installed, not included
// by anything outside policies/src.
#pragma once

#include <string>
#include <vector>

#include "kernelgate/policy.h"

namespace kg::policy::detail {

// `chain` is the list of files already being read on the way here (a profile's `base`, its
// base's `base`, ...), so that a cycle is an error naming the files instead of a stack overflow.
Policy parse(const std::string& text, const std::string& source, std::vector<std::string>& chain);
Policy load(const std::string& name_or_file, const std::string& relative_to, std::vector<std::string>& chain);

// The stem of a path: "/a/b/rl-reward.toml" -> "rl-reward".
std::string stem(const std::string& path);

}  // namespace kg::policy::detail

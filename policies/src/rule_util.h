// Helpers shared by the static rules (policies/src/rule_*.cc): names as the rules match them.
#pragma once

#include <string>
#include <vector>

namespace kg::policy::rules {

// The qualified name of a demangled symbol without return type, parameters and qualifiers:
// "float* at::TensorBase::data_ptr<float>() const" -> "at::TensorBase::data_ptr<float>",
// "vtable for c10::TensorImpl" -> "c10::TensorImpl". A C name comes back unchanged.
std::string qualified_name(const std::string& demangled);

// "at::_ops::relu::call" -> {"at", "_ops", "relu", "call"}; template arguments stay attached
// to their component ("data_ptr<float>") and "::" inside them does not split.
std::vector<std::string> components(const std::string& qualified);

// Strips template arguments from one component: "data_ptr<float>" -> "data_ptr".
std::string bare(const std::string& component);

// One evidence line naming up to `cap` symbols (demangled, with the raw name in brackets when
// it differs), then "and N more".
std::string list_symbols(const std::vector<std::string>& raw, size_t cap = 6);

}  // namespace kg::policy::rules

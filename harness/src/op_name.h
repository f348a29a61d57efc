// The base name of an overload in any spelling, shared by the op-family tables.
#pragma once

#include <string>

namespace kg::harness {

// "aten::addmm_.default" -> "addmm": no namespace, no overload, in-place and out forms alike.
inline std::string op_base_name(const std::string& op) {
  std::string k = op;
  for (const std::string prefix : {"aten::", "aten."})
    if (k.rfind(prefix, 0) == 0) k = k.substr(prefix.size());
  k = k.substr(0, k.find('.'));
  while (!k.empty() && k.back() == '_') k.pop_back();
  return k;
}

}  // namespace kg::harness

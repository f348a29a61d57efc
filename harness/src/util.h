// Small helpers shared by the harness's sources (private to harness/).
#pragma once

#include <ATen/core/function_schema.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

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

// Position of the schema argument called `name`, or -1.
inline int arg_index(const c10::FunctionSchema& schema, const std::string& name) {
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].name() == name) return static_cast<int>(i);
  return -1;
}

// The q-quantile of `v` with linear interpolation (0 for an empty list).
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace kg::harness

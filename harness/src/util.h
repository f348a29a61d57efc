// Small helpers shared by the harness's sources (private to harness/).
#pragma once

#include <ATen/core/function_schema.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace kg::harness {

// Position of the schema argument called `name`, or -1.
inline int arg_index(const c10::FunctionSchema& schema, const std::string& name) {
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].name() == name) return static_cast<int>(i);
  return -1;
}

// Whether the schema lets the op write argument `a` (`Tensor(a!)`): the judge compares such an
// argument after the call with the reference's (compare.cc), every other one with its value
// before the call, so the reference on cuda:0 brings back only these (judge.cc).
inline bool writes_argument(const c10::Argument& a) { return a.alias_info() && a.alias_info()->isWrite(); }

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

// The Policy struct's own behaviour: rule ids (from the catalogue), dtype defaults, lookups, and
// equality field by field as the schema table (policy_schema.h) lists them.
// Reading TOML is parse.cc, writing it is to_toml.cc, finding profiles is profiles.cc.
#include "kernelgate/policy.h"

#include "kernelgate/catalogue.h"
#include "kernelgate/names.h"

#include <algorithm>
#include <type_traits>
#include <variant>

#include "policy_schema.h"

namespace kg::policy {

const char* action_name(Action a) {
  switch (a) {
    case Action::Reject: return "reject";
    case Action::Flag: return "flag";
    case Action::Off: return "off";
  }
  return "reject";
}

const std::vector<std::string>& known_rules() {
  static const std::vector<std::string> rules = [] {
    std::vector<std::string> ids;
    for (const RuleInfo& r : rule_catalogue()) ids.emplace_back(r.id);
    return ids;
  }();
  return rules;
}

const std::vector<std::string>& float_dtypes() {
  static const std::vector<std::string> dtypes = [] {
    std::vector<std::string> v;
    for (names::Dtype d : names::all_dtypes())
      if (names::is_floating(d)) v.emplace_back(names::short_name(d));
    return v;
  }();
  return dtypes;
}

Tolerance builtin_tolerance(const std::string& dtype) {
  // torch.testing.assert_close's defaults (torch/testing/_comparison.py, _DTYPE_PRECISIONS).
  // A complex dtype uses its component float's values. Integers, bools, and anything this build
  // does not know (fp8, a typo in a caller): exact. Never looser than a known default, so an
  // unknown name cannot become a loophole.
  using names::Dtype;
  const auto d = names::try_parse_short_dtype(dtype);
  if (!d) return {0, 0};
  switch (*d) {
    case Dtype::F16:
    case Dtype::C32: return {1e-5, 1e-3};
    case Dtype::BF16: return {1e-5, 1.6e-2};
    case Dtype::F32:
    case Dtype::C64: return {1e-5, 1.3e-6};
    case Dtype::F64:
    case Dtype::C128: return {1e-7, 1e-7};
    default: return {0, 0};
  }
}

const std::vector<RewardPreset>& reward_presets() {
  // kevin: the KernelBench RL setup (Kevin-32B): correctness plus the speedup when correct.
  // drkernel: Dr. Kernel (KernelGYM): half for correctness, half for the speedup clipped to 3.
  // log-speedup: the log of the speedup, gated on correctness (0 when not correct).
  static const std::vector<RewardPreset> table = {
      {"kevin", 0.3, 1.0, 10.0, 1.0, "correct_weight*correct + speedup_weight*min(speedup, speedup_cap)*correct (0.3, 1, 10)"},
      {"drkernel", 0.5, 0.5, 3.0, 1.0, "correct_weight*correct + speedup_weight*clip(speedup, 0, speedup_cap)*correct (0.5, 0.5, 3)"},
      {"log-speedup", 0.0, 1.0, 100.0, 1.0,
       "correct_weight*correct + speedup_weight*log(clip(speedup, 1/speedup_cap, speedup_cap))*correct (0, 1, 100)"},
  };
  return table;
}

const std::vector<std::string>& known_libraries() {
  // Precompiled vendor libraries the forbidden_library rule can recognise in an artifact's
  // imports or in launched kernel names, plus the header-only CUDA template libraries
  // (cub, thrust, cutlass) whose kernels are recognisable by their names.
  static const std::vector<std::string> libs = {
      "blas",   "cublas", "cublaslt", "cudnn",  "cufft",    "curand", "cusolver", "cusparse", "cutensor",
      "lapack", "mkl",    "nccl",     "onednn", "openblas", "cub",    "cutlass",  "thrust",
  };
  return libs;
}

Tolerance Policy::tolerance_for(const std::string& op, const std::string& dtype) const {
  // Profiles key overrides by the profile spelling ("sum.dim_IntList", "mm.default"); `op` may be
  // any spelling of the overload, "" for none.
  if (const auto name = names::OpName::try_parse(op)) {
    auto o = op_tolerances.find(name->profile());
    if (o != op_tolerances.end()) {
      auto t = o->second.find(dtype);
      if (t != o->second.end()) return t->second;
    }
  }
  auto t = tolerances.find(dtype);
  if (t != tolerances.end()) return t->second;
  return builtin_tolerance(dtype);
}

Action Policy::action_for(const std::string& rule) const {
  auto it = rules.find(rule);
  return it == rules.end() ? Action::Reject : it->second;
}

bool operator==(const Tolerance& a, const Tolerance& b) {
  for (const auto& f : schema::tolerance_fields())
    if (!(a.*f.member == b.*f.member)) return false;
  return true;
}
bool operator!=(const Tolerance& a, const Tolerance& b) { return !(a == b); }

// Every field of the schema table that sets a member; `source` is not in it.
bool operator==(const Policy& a, const Policy& b) {
  for (const auto& f : schema::fields()) {
    const bool same = std::visit(
        [&](auto member) {
          if constexpr (std::is_same_v<decltype(member), std::monostate>) return true;
          else return a.*member == b.*member;
        },
        f.member);
    if (!same) return false;
  }
  return true;
}
bool operator!=(const Policy& a, const Policy& b) { return !(a == b); }

}  // namespace kg::policy

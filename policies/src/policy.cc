// The Policy struct's own behaviour: rule ids, dtype defaults, lookups and equality.
// Reading TOML is parse.cc, writing it is to_toml.cc, finding profiles is profiles.cc.
#include "kernelgate/policy.h"

#include <algorithm>

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
  // THREATS.md section B, in its order. `sandbox_violation` is section A's rule: a containment
  // breach seen by the sandbox layer is also a verdict the policy decides on.
  static const std::vector<std::string> rules = {
      "fallback_to_torch",   "forbidden_library",       "trivial_output",  "unwritten_output",
      "input_mutated",       "replayed_output",         "stateful_output", "nondeterministic_output",
      "async_escape",        "impossible_speed",        "timer_tampering", "cache_tampering",
      "shape_specialisation", "no_device_work",         "protocol_violation", "sandbox_violation",
  };
  return rules;
}

const std::vector<std::string>& float_dtypes() {
  // BackendBench's / trace.h's short names. c32 is complex32 (torch.chalf).
  static const std::vector<std::string> dtypes = {"f16", "bf16", "f32", "f64", "c32", "c64", "c128"};
  return dtypes;
}

Tolerance builtin_tolerance(const std::string& dtype) {
  // torch.testing.assert_close's defaults (torch/testing/_comparison.py, _DTYPE_PRECISIONS).
  // A complex dtype uses its component float's values.
  if (dtype == "f16" || dtype == "c32") return {1e-5, 1e-3};
  if (dtype == "bf16") return {1e-5, 1.6e-2};
  if (dtype == "f32" || dtype == "c64") return {1e-5, 1.3e-6};
  if (dtype == "f64" || dtype == "c128") return {1e-7, 1e-7};
  // Integers, bools, and anything this build does not know (fp8, a typo in a caller): exact.
  // Never looser than a known default, so an unknown name cannot become a loophole.
  return {0, 0};
}

const std::vector<std::string>& known_libraries() {
  // Precompiled vendor libraries the forbidden_library rule can recognise in an artifact's
  // imports or in launched kernel names, plus the header-only CUDA template libraries
  // (cub, thrust, cutlass) whose kernels are recognisable by their names.
  static const std::vector<std::string> libs = {
      "blas",     "cublas", "cublaslt", "cudnn",  "cufft",  "curand",  "cusolver", "cusparse",
      "cutensor", "lapack", "mkl",      "nccl",   "onednn", "openblas", "cub",     "cutlass",
      "thrust",
  };
  return libs;
}

namespace {
// The spelling profiles use: "sum.dim_IntList". "aten::sum.dim_IntList" and
// "aten.sum.dim_IntList" name the same overload; the dispatcher writes the default overload
// without a suffix ("aten::mm"), which trace files and profiles write "mm.default".
std::string op_key(const std::string& op) {
  std::string k = op;
  for (const char* prefix : {"aten::", "aten."}) {
    const std::string p = prefix;
    if (k.compare(0, p.size(), p) == 0) {
      k = k.substr(p.size());
      break;
    }
  }
  if (!k.empty() && k.find('.') == std::string::npos) k += ".default";
  return k;
}
}  // namespace

Tolerance Policy::tolerance_for(const std::string& op, const std::string& dtype) const {
  auto o = op_tolerances.find(op_key(op));
  if (o != op_tolerances.end()) {
    auto t = o->second.find(dtype);
    if (t != o->second.end()) return t->second;
  }
  auto t = tolerances.find(dtype);
  if (t != tolerances.end()) return t->second;
  return builtin_tolerance(dtype);
}

Action Policy::action_for(const std::string& rule) const {
  auto it = rules.find(rule);
  return it == rules.end() ? Action::Reject : it->second;
}

bool operator==(const Tolerance& a, const Tolerance& b) { return a.atol == b.atol && a.rtol == b.rtol; }
bool operator!=(const Tolerance& a, const Tolerance& b) { return !(a == b); }

bool operator==(const Policy& a, const Policy& b) {
  return a.name == b.name && a.description == b.description && a.tolerances == b.tolerances &&
         a.op_tolerances == b.op_tolerances && a.rules == b.rules &&
         a.allowed_libraries == b.allowed_libraries && a.correctness_trials == b.correctness_trials &&
         a.timing_warmup == b.timing_warmup && a.timing_min_reps == b.timing_min_reps &&
         a.timing_max_reps == b.timing_max_reps && a.timing_min_seconds == b.timing_min_seconds &&
         a.timing_rotation_mib == b.timing_rotation_mib &&
         a.timing == b.timing && a.compile_time_s == b.compile_time_s &&
         a.compile_memory_mb == b.compile_memory_mb && a.run_call_time_s == b.run_call_time_s &&
         a.run_memory_mb == b.run_memory_mb && a.cache_artifact_mb == b.cache_artifact_mb;
}
bool operator!=(const Policy& a, const Policy& b) { return !(a == b); }

}  // namespace kg::policy

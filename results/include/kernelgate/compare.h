// `kernelgate compare A B`: two results side by side per op, and whether the claims of B hold
// against A. A is the run to trust (a results.json, or an OUT folder holding one); B is another
// run or a leaderboard's claimed figures (a claims file: docs/reports.md). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kg::results {

using json = nlohmann::json;

// One op as one side has it. A claims file may leave the verdict or the speedup unsaid.
struct SideOp {
  std::string op;                      // the overload, "relu.default" ("aten." / "aten::" dropped)
  std::optional<std::string> verdict;  // pass | fail | rejected | error
  std::optional<double> speedup;
  std::vector<std::string> rules;  // violations[].rule, each once, sorted (a claims file has none)
};

struct CompareSide {
  std::string path;  // the file read
  std::string kind;  // "results" or "claims"
  std::vector<SideOp> ops;
};

// Reads A or B: a folder (its results.json), a results.json, a claims JSON ({"kernelgate_claims": 1,
// "claims": [{"operator", "verdict", "speedup"}...]}) or a claims CSV (a header naming operator and
// verdict and/or speedup). Throws std::runtime_error "PATH[:LINE]: FIELD: problem".
CompareSide read_compare_side(const std::string& path);

// "relu.default" from "aten.relu.default" or "aten::relu.default"; other names as they are.
std::string overload_name(const std::string& name);

struct Claim {
  std::string what;  // "pass" or "speedup"
  bool holds = false;
  std::string why;  // one line: what was claimed and what A has
};

struct OpComparison {
  std::string op;
  std::optional<SideOp> a, b;
  bool verdict_changed = false;                // both sides have a verdict and they differ
  std::optional<double> speedup_ratio;         // A's speedup / B's, when both have one
  std::vector<std::string> rules_appeared;     // in B, not in A
  std::vector<std::string> rules_disappeared;  // in A, not in B
  std::vector<Claim> claims;                   // B's claimed passes and speedups, checked against A
};

struct Comparison {
  double speedup_tolerance = 0.1;
  std::vector<OpComparison> ops;  // sorted by op
  size_t verdict_changes = 0, claims_checked = 0, claims_failed = 0;
};

// A claimed pass holds when A passed the op; a claimed speedup S when A passed it with a speedup of
// at least S x (1 - speedup_tolerance). An op B claims and A lacks holds no claim.
Comparison compare_sides(const CompareSide& a, const CompareSide& b, double speedup_tolerance);

// The table, the claims that do not hold, and a summary line.
std::string comparison_text(const Comparison& c, const CompareSide& a, const CompareSide& b);
json comparison_json(const Comparison& c, const CompareSide& a, const CompareSide& b);
// 0 when every claim of B holds against A, else 1.
int comparison_exit_code(const Comparison& c);

}  // namespace kg::results

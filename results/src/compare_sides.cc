// The per-op comparison of `kernelgate compare` (compare.h compare_sides): verdict changes, the
// speedup ratio, rules that appeared or disappeared, and whether each claim of B holds against A.
#include "kernelgate/compare.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>

namespace kg::results {
namespace {

std::string times(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", s);
  return buf;
}

std::vector<std::string> only_in(const std::vector<std::string>& x, const std::vector<std::string>& y) {
  std::vector<std::string> out;
  std::set_difference(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(out));
  return out;
}

Claim pass_claim(const std::optional<SideOp>& a) {
  if (!a) return {"pass", false, "claimed pass; A did not evaluate the op"};
  if (a->verdict != "pass") return {"pass", false, "claimed pass; A's verdict is " + a->verdict.value_or("none")};
  return {"pass", true, "claimed pass; A passed it"};
}

Claim speedup_claim(const std::optional<SideOp>& a, double claimed, double tolerance) {
  const std::string said = "claimed speedup " + times(claimed);
  if (!a) return {"speedup", false, said + "; A did not evaluate the op"};
  if (a->verdict != "pass") return {"speedup", false, said + "; A's verdict is " + a->verdict.value_or("none") + ", so no speedup counts"};
  if (!a->speedup) return {"speedup", false, said + "; A measured none (not timed)"};
  char tol[16];
  std::snprintf(tol, sizeof tol, "%g%%", tolerance * 100);
  const bool holds = *a->speedup >= claimed * (1 - tolerance);
  return {"speedup", holds, said + "; A measured " + times(*a->speedup) + (holds ? ", within " : ", short by more than ") + tol};
}

}  // namespace

Comparison compare_sides(const CompareSide& a, const CompareSide& b, double speedup_tolerance) {
  Comparison c;
  c.speedup_tolerance = speedup_tolerance;
  std::map<std::string, OpComparison> by_op;
  for (const SideOp& o : a.ops) by_op[o.op].a = o;
  for (const SideOp& o : b.ops) by_op[o.op].b = o;
  for (auto& [op, cmp] : by_op) {
    cmp.op = op;
    if (cmp.a && cmp.b) {
      cmp.verdict_changed = cmp.a->verdict && cmp.b->verdict && *cmp.a->verdict != *cmp.b->verdict;
      if (cmp.a->speedup && cmp.b->speedup) cmp.speedup_ratio = *cmp.a->speedup / *cmp.b->speedup;
      // A claims file says nothing about rules: nothing appeared or disappeared.
      if (a.kind == "results" && b.kind == "results") {
        cmp.rules_appeared = only_in(cmp.b->rules, cmp.a->rules);
        cmp.rules_disappeared = only_in(cmp.a->rules, cmp.b->rules);
      }
    }
    if (cmp.b && cmp.b->verdict == "pass") cmp.claims.push_back(pass_claim(cmp.a));
    if (cmp.b && cmp.b->speedup) cmp.claims.push_back(speedup_claim(cmp.a, *cmp.b->speedup, speedup_tolerance));
    c.verdict_changes += cmp.verdict_changed;
    for (const Claim& claim : cmp.claims) {
      c.claims_checked++;
      c.claims_failed += !claim.holds;
    }
    c.ops.push_back(std::move(cmp));
  }
  return c;
}

int comparison_exit_code(const Comparison& c) { return c.claims_failed == 0 ? 0 : 1; }

}  // namespace kg::results

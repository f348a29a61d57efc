// What `kernelgate compare` prints and writes (compare.h comparison_text, comparison_json).
#include "kernelgate/compare.h"

#include <cstdio>
#include <sstream>

namespace kg::results {
namespace {

std::string speedup_text(const std::optional<SideOp>& side) {
  if (!side || !side->speedup) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", *side->speedup);
  return buf;
}

std::string verdict_text(const std::optional<SideOp>& side) { return !side ? "(absent)" : side->verdict.value_or("-"); }

std::string rules_text(const OpComparison& o) {
  std::string out;
  for (const auto& r : o.rules_appeared) out += (out.empty() ? "+" : " +") + r;
  for (const auto& r : o.rules_disappeared) out += (out.empty() ? "-" : " -") + r;
  return out.empty() ? "-" : out;
}

std::string claims_text(const OpComparison& o) {
  if (o.claims.empty()) return "-";
  for (const Claim& c : o.claims)
    if (!c.holds) return "DOES NOT HOLD";
  return "holds";
}

std::string padded(const std::string& s, size_t width) { return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' '); }

json side_json(const std::optional<SideOp>& side) {
  if (!side) return nullptr;
  return {{"verdict", side->verdict ? json(*side->verdict) : json(nullptr)},
          {"speedup", side->speedup ? json(*side->speedup) : json(nullptr)},
          {"rules", side->rules}};
}

}  // namespace

std::string comparison_text(const Comparison& c, const CompareSide& a, const CompareSide& b) {
  std::ostringstream o;
  o << "A: " << a.path << " (" << a.kind << ")\nB: " << b.path << " (" << b.kind << ")\n\n";
  o << padded("op", 24) << padded("A verdict", 11) << padded("B verdict", 11) << padded("A speedup", 11) << padded("B speedup", 11)
    << padded("A/B", 7) << padded("rules (B vs A)", 24) << "claims of B\n";
  for (const OpComparison& op : c.ops) {
    char ratio[32] = "-";
    if (op.speedup_ratio) std::snprintf(ratio, sizeof ratio, "%.2f", *op.speedup_ratio);
    o << padded(op.op, 24) << padded(verdict_text(op.a), 11) << padded(verdict_text(op.b), 11) << padded(speedup_text(op.a), 11)
      << padded(speedup_text(op.b), 11) << padded(ratio, 7) << padded(rules_text(op), 24) << claims_text(op) << "\n";
  }
  bool header = false;
  for (const OpComparison& op : c.ops)
    for (const Claim& claim : op.claims) {
      if (claim.holds) continue;
      if (!header) o << "\nclaims of B that do not hold against A:\n";
      header = true;
      o << "  " << op.op << ": " << claim.why << "\n";
    }
  char tol[16];
  std::snprintf(tol, sizeof tol, "%g%%", c.speedup_tolerance * 100);
  o << "\n"
    << c.ops.size() << " ops, " << c.verdict_changes << " verdict changes; " << c.claims_checked << " claims of B checked, "
    << c.claims_failed << " do not hold (speedup tolerance " << tol << ")\n";
  return o.str();
}

json comparison_json(const Comparison& c, const CompareSide& a, const CompareSide& b) {
  json ops = json::array();
  for (const OpComparison& op : c.ops) {
    json claims = json::array();
    for (const Claim& claim : op.claims) claims.push_back({{"claim", claim.what}, {"holds", claim.holds}, {"why", claim.why}});
    ops.push_back({{"op", op.op},
                   {"a", side_json(op.a)},
                   {"b", side_json(op.b)},
                   {"verdict_changed", op.verdict_changed},
                   {"speedup_ratio", op.speedup_ratio ? json(*op.speedup_ratio) : json(nullptr)},
                   {"rules_appeared", op.rules_appeared},
                   {"rules_disappeared", op.rules_disappeared},
                   {"claims", claims}});
  }
  return {{"kernelgate_compare", 1},
          {"a", {{"path", a.path}, {"kind", a.kind}}},
          {"b", {{"path", b.path}, {"kind", b.kind}}},
          {"speedup_tolerance", c.speedup_tolerance},
          {"ops", ops},
          {"summary",
           {{"ops", c.ops.size()},
            {"verdict_changes", c.verdict_changes},
            {"claims_checked", c.claims_checked},
            {"claims_failed", c.claims_failed},
            {"all_claims_hold", c.claims_failed == 0}}}};
}

}  // namespace kg::results

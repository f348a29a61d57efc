// results.json's "summary" object, computed from its per-op objects: the one implementation, used
// by the report of one submission, the batch summaries and the merge of shards.
#include "kernelgate/results.h"
#include "summary_fields.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace kg::results {
namespace {

double geomean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

double fraction(long long part, long long whole) { return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

}  // namespace

json summary_of_ops(const json& ops, double wall_s) {
  if (!ops.is_array()) throw std::runtime_error("ops: not an array");
  const std::vector<OpFields> fields = op_fields_of(ops);
  int passed = 0, failed = 0, rejected = 0, errors = 0;
  long long tests = 0, tests_passed = 0;
  std::vector<double> speedups;
  for (const OpFields& o : fields) {
    tests += o.tests_total;
    tests_passed += o.tests_passed;
    if (o.verdict == "pass") passed++;
    else if (o.verdict == "fail") failed++;
    else if (o.verdict == "rejected") rejected++;
    else errors++;
    if (o.verdict == "pass" && o.speedup && *o.speedup > 0 && std::isfinite(*o.speedup)) speedups.push_back(*o.speedup);
  }
  // fast_p: the fraction of ops that are correct and faster than p times eager.
  json fast = json::object();
  for (const auto& [key, p] :
       std::vector<std::pair<const char*, double>>{{"fast_0", 0.0}, {"fast_1", 1.0}, {"fast_1.5", 1.5}, {"fast_2", 2.0}}) {
    int n = 0;
    for (const OpFields& o : fields)
      if (o.verdict == "pass" && (p == 0.0 || (o.speedup && *o.speedup > p))) n++;
    fast[key] = fraction(n, static_cast<long long>(fields.size()));
  }
  return {{"ops", fields.size()},
          {"passed", passed},
          {"failed", failed},
          {"rejected", rejected},
          {"errors", errors},
          {"tests_total", tests},
          {"tests_passed", tests_passed},
          {"fraction_ops_correct", fraction(passed, static_cast<long long>(fields.size()))},
          {"test_pass_rate", fraction(tests_passed, tests)},
          {"fast_p", fast},
          {"geomean_speedup_correct_ops", speedups.empty() ? json(nullptr) : json(geomean(speedups))},
          {"wall_seconds", wall_s}};
}

}  // namespace kg::results

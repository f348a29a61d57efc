// OUT/summary.csv: one row per (submission, op), RFC 4180, with BackendBench's operator-summary
// column names where a column means the same thing (docs/batches.md lists them).
#include "kernelgate/results.h"
#include "summary_fields.h"

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace kg::results {
namespace {

const std::vector<std::string> kColumns = {"submission",
                                           "operator",
                                           "kind",
                                           "verdict",
                                           "tests_total",
                                           "tests_passed",
                                           "correctness_rate",
                                           "performance_tests",
                                           "avg_speedup",
                                           "geomean_speedup",
                                           "max_absolute_error",
                                           "max_relative_error",
                                           "rules",
                                           "failure_categories"};

// RFC 4180: a field holding a comma, a double quote, CR or LF is quoted, its quotes doubled.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Numbers as results.json writes them (the shortest text that reads back the same); empty for none.
std::string number(std::optional<double> v) { return v && std::isfinite(*v) ? json(*v).dump() : std::string(); }

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ";") + s;
  return out;
}

std::vector<std::string> op_row(const std::string& submission, const OpFields& o) {
  std::optional<double> avg;
  if (o.speedup && !o.sample_speedups.empty()) {
    double sum = 0;
    for (double s : o.sample_speedups) sum += s;
    avg = sum / static_cast<double>(o.sample_speedups.size());
  }
  const double rate = o.tests_total ? static_cast<double>(o.tests_passed) / static_cast<double>(o.tests_total) : 0.0;
  std::vector<std::string> categories;
  for (const auto& [category, n] : o.failure_categories) categories.push_back(category + "=" + std::to_string(n));
  return {submission,
          o.op,
          o.kind,
          o.verdict,
          std::to_string(o.tests_total),
          std::to_string(o.tests_passed),
          number(rate),
          std::to_string(o.timed_samples),
          number(avg),
          number(o.speedup),
          number(o.max_abs_err),
          number(o.max_rel_err),
          joined(o.rules),
          joined(categories)};
}

void write_row(std::ostringstream& o, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) o << (i ? "," : "") << csv_field(fields[i]);
  o << "\r\n";
}

}  // namespace

std::string batch_summary_csv(const std::vector<BatchEntry>& entries) {
  std::ostringstream o;
  write_row(o, kColumns);
  for (const BatchEntry& e : entries) {
    const std::vector<OpFields> ops = entry_op_fields(e);
    // A submission without ops still has its row, so that no judged submission is missing.
    if (ops.empty()) {
      std::vector<std::string> row(kColumns.size());
      row[0] = e.name;
      row[3] = submission_verdict(ops);
      row[4] = row[5] = row[7] = "0";
      write_row(o, row);
    }
    for (const OpFields& op : ops) write_row(o, op_row(e.name, op));
  }
  return o.str();
}

}  // namespace kg::results

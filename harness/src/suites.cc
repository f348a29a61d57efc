#include "suites.h"

#include <algorithm>
#include <stdexcept>

namespace kg::harness {
namespace {

std::vector<Sample> parse_table(const std::string& suite, const std::vector<SampleSpec>& specs) {
  std::vector<Sample> out;
  for (const auto& s : specs) {
    Sample x;
    x.op = s.op;
    x.call = trace::parse_call(s.spec, suite + " suite, " + s.op);
    x.family = s.family;
    x.label = s.label;
    x.traits = s.traits;
    out.push_back(std::move(x));
  }
  return out;
}

const std::vector<Sample>& all_samples(const std::string& suite) {
  if (suite == "smoke") {
    static const std::vector<Sample> smoke = parse_table("smoke", smoke_specs());
    return smoke;
  }
  throw std::runtime_error("unknown suite '" + suite + "' (known: smoke)");
}

}  // namespace

std::vector<std::string> suite_names() { return {"smoke"}; }

std::vector<Sample> suite_samples(const std::string& suite, const std::string& op) {
  std::vector<Sample> out;
  for (const auto& s : all_samples(suite))
    if (s.op == op) out.push_back(s);
  return out;
}

std::vector<std::string> suite_ops(const std::string& suite) {
  std::vector<std::string> out;
  for (const auto& s : all_samples(suite))
    if (std::find(out.begin(), out.end(), s.op) == out.end()) out.push_back(s.op);
  return out;
}

}  // namespace kg::harness

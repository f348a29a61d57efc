// `kernelgate compare A B`: two results side by side per op, and whether B's claims (another run,
// or a leaderboard's claimed figures) hold against A (kernelgate/compare.h).
#include "kernelgate/compare.h"
#include "kernelgate/results.h"
#include "kernelgate/text_safety.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const char* kCompareUsage =
    "usage: kernelgate compare A B [--speedup-tolerance T] [--json FILE]\n"
    "\n"
    "Puts two results side by side per op: verdicts and their changes, speedups and their ratio A/B,\n"
    "rules that appeared (in B, not A) or disappeared. A is the run to trust: a results.json or an\n"
    "OUT folder holding one. B is another run (the same) or a leaderboard's claimed figures: a claims\n"
    "file, JSON {\"kernelgate_claims\": 1, \"claims\": [{\"operator\": \"relu.default\", \"verdict\":\n"
    "\"pass\", \"speedup\": 1.8}]} or CSV with a header naming operator, verdict and/or speedup\n"
    "(docs/reports.md). Every claimed pass of B must be a pass in A, and every claimed speedup S must\n"
    "be met by A's: at least S x (1 - T).\n"
    "  --speedup-tolerance T  how far A's speedup may fall short of a claim: a fraction (0.1) or a\n"
    "                         percentage (10%); default 10%\n"
    "  --json FILE            also write the comparison as JSON\n"
    "example:\n"
    "  kernelgate audit subs/alice --out audited && kernelgate compare audited leaderboard/alice.csv\n"
    "\n"
    "Exit status: 0 every claim of B holds against A, 1 a claimed pass or a claimed speedup does not\n"
    "hold, 2 bad usage or an unreadable or malformed input (the error names the file and the field).\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "kernelgate compare: %s\n\n%s", kg::text::terminal_safe(msg).c_str(), kCompareUsage);
  return 2;
}

// "0.1" or "10%": a fraction in [0, 1).
bool parse_tolerance(const std::string& text, double* out) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string digits = percent ? text.substr(0, text.size() - 1) : text;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(digits.c_str(), &end);
  if (digits.empty() || errno || !end || *end || !std::isfinite(v)) return false;
  if (percent) v /= 100;
  if (v < 0 || v >= 1) return false;
  *out = v;
  return true;
}

}  // namespace

int kg_cmd_compare(int argc, char** argv) {
  std::vector<std::string> inputs;
  std::string json_file;
  double tolerance = 0.1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kCompareUsage, stdout);
      return 0;
    } else if (a == "--json" || a == "--speedup-tolerance") {
      if (i + 1 >= argc) return usage_error(a + " needs a value");
      const std::string v = argv[++i];
      if (a == "--json") json_file = v;
      else if (!parse_tolerance(v, &tolerance))
        return usage_error("--speedup-tolerance must be a fraction in [0, 1) or a percentage, got '" + v + "'");
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option " + a);
    } else {
      inputs.push_back(a);
    }
  }
  if (inputs.size() != 2) return usage_error("expected two inputs, A and B, got " + std::to_string(inputs.size()));
  try {
    const kg::results::CompareSide a = kg::results::read_compare_side(inputs[0]);
    const kg::results::CompareSide b = kg::results::read_compare_side(inputs[1]);
    const kg::results::Comparison c = kg::results::compare_sides(a, b, tolerance);
    if (!json_file.empty()) kg::results::write_atomically(json_file, kg::results::comparison_json(c, a, b).dump(2) + "\n");
    std::fputs(kg::text::terminal_safe(kg::results::comparison_text(c, a, b), kg::text::Newlines::Keep).c_str(), stdout);
    return kg::results::comparison_exit_code(c);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelgate compare: %s\n", kg::text::terminal_safe(e.what()).c_str());
    return 2;
  }
}

// `kernelgate audit`: evaluate a submission under the `audit` profile and write a report an
// organiser can forward (OUT/audit.md, OUT/audit.json) next to the usual results.json.
#include "eval_cli.h"
#include "eval_reports.h"
#include "report_file.h"

#include <ctime>
#include <filesystem>
#include <iostream>
#include <string>

namespace {

const char* kAuditUsage =
    "usage: kernelgate audit DIR [--suite NAME] [--ops LIST] [--device cpu|cuda|auto] [--out DIR] [--seed N] [--junit FILE]\n"
    "                       [--quiet|--verbose]\n"
    "\n"
    "Evaluates the submission DIR as `eval` does, under the `audit` profile (every rule rejects,\n"
    "5 trials, a long timing loop), and writes OUT/audit.md (to forward), OUT/audit.json,\n"
    "OUT/report.html (the findings with the results, one page for a browser) and OUT/results.json\n"
    "(OUT defaults to ./kernelgate-audit). Per rule (docs/threats.md) the\n"
    "report says what kernelgate checked, the profile's action, and per op the evidence found,\n"
    "\"nothing found\", or why the check was not reached.\n"
    "  --suite NAME   sample suite (default auto: each op on the smallest suite that has it)\n"
    "  --ops LIST     comma-separated overloads to audit (default: every op folder)\n"
    "  --junit FILE   also write JUnit XML: a testcase per op x sample, rule findings as failures\n"
    "Example: kernelgate audit leaderboard_entry/ --device cuda --out audit/   (forward audit/audit.md)\n"
    "Exit status: 0 every op passed and no rule found anything, 1 something was found or failed\n"
    "(or DIR has no op folders), 2 bad usage or configuration, or an output file could not be written.\n";

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

int kg_cmd_audit(int argc, char** argv) {
  kg::cli::EvalCli cli;
  cli.policy_name = "audit";
  cli.opt.out_dir = "kernelgate-audit";
  cli.extra_outputs = {"audit.md", "audit.json", "report.html"};
  if (int rc = kg::cli::parse_eval_cli(argc, argv, kg::cli::EvalMode::Audit, kAuditUsage, &cli); rc >= 0) return rc;
  const std::string date = utc_now();
  kg::policy::Policy policy;
  kg::harness::Report report;
  if (int rc = kg::cli::evaluate_to_results(cli, "audit", &policy, &report); rc >= 0) return rc;
  const std::filesystem::path out = cli.opt.out_dir;
  const std::string md = (out / "audit.md").string();
  if (!kg::cli::write_text_file(md, kg::harness::audit_markdown(report, policy, date), "audit") ||
      !kg::cli::write_text_file((out / "audit.json").string(), kg::harness::audit_json(report, policy, date), "audit"))
    return 2;
  if (!kg::cli::write_submission_reports(cli, report, false, "audit")) return 2;
  if (!kg::cli::write_report_html(cli.opt.out_dir, true, "audit")) return 2;
  if (cli.verbosity != kg::cli::Verbosity::Quiet) std::cout << kg::harness::report_table(report) << "\naudit report: " << md << "\n";
  // Flagged evidence does not change a verdict, but an audit that found something is not clean.
  int rc = kg::harness::report_exit_code(report);
  for (const auto& r : report.ops) rc |= r.violations.empty() ? 0 : 1;
  return rc;
}

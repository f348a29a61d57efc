// `kernelgate eval --batch DIR` / `--batch-list FILE`: many submissions into one OUT (engine.h).
#include "eval_cli.h"
#include "eval_reports.h"
#include "output_files.h"

#include "kernelgate/engine.h"
#include "kernelgate/text_safety.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace kg::cli {
namespace {

// --shard, else the Slurm array's environment, else the whole batch. False (with a message) when malformed.
bool batch_shard(const EvalCli& cli, results::Shard* shard) {
  std::string error;
  std::optional<results::Shard> s = cli.shard.empty() ? results::shard_from_environment(&error) : results::parse_shard(cli.shard, &error);
  if (!error.empty()) {
    print_error("eval", (cli.shard.empty() ? "" : "--shard: ") + error);
    return false;
  }
  if (s) *shard = *s;
  return true;
}

// One line per submission, its verdict and rules as summary.json has them (batch_summary_json).
void print_table(const engine::BatchOutcome& outcome) {
  const results::json summary = results::batch_summary_json(outcome.identity, outcome.entries);
  std::printf("%-28s %-9s %-9s %s\n", "submission", "verdict", "ops", "rules");
  for (const results::json& sub : summary["submissions"]) {
    int passed = 0, total = 0;
    std::string rules;
    for (const results::json& op : sub["ops"]) {
      ++total;
      passed += op["verdict"] == "pass";
      for (const results::json& rule : op["rules"])
        if (rules.find(rule.get<std::string>()) == std::string::npos) rules += (rules.empty() ? "" : ",") + rule.get<std::string>();
    }
    std::printf("%-28s %-9s %-9s %s\n", text::terminal_safe(sub["name"].get<std::string>()).c_str(),
                sub["verdict"].get<std::string>().c_str(), (std::to_string(passed) + "/" + std::to_string(total)).c_str(), rules.c_str());
  }
}

}  // namespace

int run_batch_cli(const EvalCli& cli) {
  engine::BatchOptions o;
  o.eval = cli.opt;
  o.out_dir = cli.opt.out_dir;
  o.jobs = cli.opt.jobs;
  o.device_pools = cli.device_pools;
  o.resume = cli.resume;
  if (!batch_shard(cli, &o.shard)) return 2;
  engine::BatchOutcome outcome;
  try {
    if (!cli.junit_file.empty()) remove_previous_output(cli.junit_file);
    o.submissions = cli.batch_dir.empty() ? engine::submissions_listed(cli.batch_list) : engine::submissions_in(cli.batch_dir);
    const policy::Policy policy = policy::load(cli.policy_name);
    ProgressLine progress(cli.verbosity);  // cleared before the table is printed
    o.on_progress = [&progress](const harness::EvalProgress& p) { progress.update(p); };
    outcome = engine::run_batch(o, policy);
  } catch (const std::exception& e) {
    print_error("eval", e.what());
    return 2;
  }
  if (!cli.junit_file.empty()) {
    std::vector<results::JunitSubmission> suites;
    for (const results::BatchEntry& e : outcome.entries) suites.push_back({e.name, e.results});
    if (!write_junit(cli.junit_file, suites, cli.opt.suite, "eval")) return 2;
  }
  if (cli.verbosity != Verbosity::Quiet) {
    print_table(outcome);
    std::cout << "\nsummary: " << (std::filesystem::path(o.out_dir) / "summary.json").string() << "\n";
  }
  return results::batch_exit_code(outcome.entries);
}

}  // namespace kg::cli

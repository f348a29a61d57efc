// `kernelgate eval` and `kernelgate repro`: evaluate a submission, or re-run one sample of it.
// The option parser and the evaluation are shared with `kernelgate audit` (eval_cli.h).
#include "eval_cli.h"
#include "eval_reports.h"
#include "report_file.h"
#include "output_files.h"
#include "warm_pool.h"

#include "kernelgate/results.h"
#include "kernelgate/text_safety.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace {

const char* kEvalUsage =
    "usage: kernelgate eval DIR|--self-check [--suite NAME|PATH] [--ops LIST] [--policy NAME|FILE]\n"
    "                       [--device cpu|cuda|auto] [--out DIR] [--seed N] [--no-timing] [--jobs N]\n"
    "                       [--feedback FILE] [--tolerance-sweep] [--no-runner-pool] [--junit FILE] [--quiet|--verbose]\n"
    "       kernelgate eval --batch DIR|--batch-list FILE [--shard I/N] [--resume] [--jobs N]\n"
    "                       [--devices N] [the options above]\n"
    "       kernelgate eval --problem PROBLEM.py SOLUTION.py|--problem PROBLEMS/ SOLUTIONS/ [--out DIR]\n"
    "                       [--seed N] [--policy P] [--no-timing] [--feedback FILE] [--quiet|--verbose]\n"
    "\n"
    "Builds every op folder of the submission DIR in the sandbox, runs it on inputs drawn from a\n"
    "secret seed (or --seed N to reproduce), compares with PyTorch eager, times passing ops, and\n"
    "writes OUT/results.json (OUT defaults to ./kernelgate-out), OUT/summary.csv, OUT/summary.md and\n"
    "OUT/report.html (one self-contained page to read in a browser). Prints a verdict table.\n"
    "  --suite NAME       sample suite: smoke, edge, edge-large, opinfo, traces, or a PATH to a trace\n"
    "                     file in BackendBench's format or a directory of them. Default auto: each op on\n"
    "                     the first of smoke, edge, opinfo, traces that has samples for it (results.json\n"
    "                     names the suite per op); --self-check defaults to smoke\n"
    "  --ops LIST         comma-separated overloads to evaluate (default: every op folder)\n"
    "  --policy P         policy profile name or TOML file (default competition)\n"
    "  --self-check       no submission: the runner calls each aten overload of the suite itself;\n"
    "                     every op must pass (checks inputs, protocol, sandbox and comparison)\n"
    "  --feedback FILE    write a short account of every failing op, to paste into a model's prompt\n"
    "  --tolerance-sweep  also report pass counts per op at atol=rtol in {1e-5, 1e-3, 1e-2}, under the\n"
    "                     policy's atol/rtol and under the context-aware tolerance (docs/verdicts.md)\n"
    "  --junit FILE       also write JUnit XML: a testsuite per submission, a testcase per op x sample\n"
    "                     (failures carry the category and evidence, rule findings name the rule)\n"
    "  --jobs N           builds at once (default: the machine's cores), ahead of and beside the runs;\n"
    "                     in a batch also the submissions in flight\n"
    "  --no-runner-pool   start each runner when it is needed instead of ahead (for measuring the pool)\n"
    "  --quiet, -q        no progress line and no table: only the files and the exit status\n"
    "  --verbose, -v      a line per op as it starts and is decided, instead of the progress line\n"
    "                     (the progress line is drawn only when stderr is a terminal)\n"
    "KernelBench (docs/kernelbench.md):\n"
    "  --problem P S      judge KernelBench's format: the problem file P (class Model, get_inputs(),\n"
    "                     get_init_inputs()) against the solution file S (class ModelNew), each in its\n"
    "                     own sandboxed runner; or every problem of folder P against the solution of\n"
    "                     folder S with its file name (or its problem number). An op per problem\n"
    "Batches (docs/batches.md):\n"
    "  --batch DIR        judge every submission directory directly inside DIR: OUT/<name>/results.json\n"
    "                     each, OUT/summary.json, summary.csv, summary.md, OUT/journal.jsonl (every\n"
    "                     op the moment it is decided), and report.html (a leaderboard) in OUT and each\n"
    "                     OUT/<name>\n"
    "  --batch-list FILE  the same for the directories FILE lists, one a line\n"
    "  --shard I/N        judge only shard I (0-based) of N: a stable subset of (submission, op) pairs\n"
    "                     (default: SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT when set); combine the\n"
    "                     shards' OUT folders with kernelgate merge\n"
    "  --resume           finish an interrupted batch in the same OUT: what its journal holds is not\n"
    "                     judged again (same seed, same verdicts)\n"
    "  --devices N        device pools: on cuda the first N GPUs (default: every visible one); ops judge\n"
    "                     side by side on a pool, timed calls run alone on it; on the CPU N simulated\n"
    "                     pools (default 1)\n"
    "Examples:\n"
    "  kernelgate eval examples/correct --out out/          judge one submission; open out/report.html\n"
    "  kernelgate eval my_kernels/ --suite edge --ops neg.default --device cuda --junit out/junit.xml\n"
    "  kernelgate eval --batch subs/ --out out/ --no-timing --jobs 8\n"
    "Exit status: 0 every evaluated op passed (in a batch: of every submission), 1 some op failed, was\n"
    "rejected or errored, or DIR has no op folders, 2 bad usage, a journal of another run or a corrupt\n"
    "one, or an output file could not be written.\n";

const char* kReproUsage =
    "usage: kernelgate repro DIR|--self-check --op OP --sample 'LINE' [--values normal|special|positive]\n"
    "                        [--index N] [--seed N] [--policy NAME|FILE] [--device D] [--out DIR] [--time]\n"
    "\n"
    "Re-runs one sample: LINE is the sample in trace syntax as results.json gives it (with or\n"
    "without 'cnt: N, '); with the same --seed, --values and --index the values are the same.\n"
    "--time also times it against eager (as eval does for passing samples).\n"
    "Example (the line results.json gives for a failure):\n"
    "  kernelgate repro my_kernels/ --op relu.default --sample '((T([4, 5], f32),), {})' --seed 7 --index 3\n"
    "Exit status as for eval: 0 the sample passed, 1 it failed or was rejected, 2 bad usage.\n";

using kg::cli::EvalCli;
using kg::cli::EvalMode;

int usage_error(const char* cmd, const char* usage, const std::string& msg) {
  std::fprintf(stderr, "kernelgate %s: %s\n\n%s", cmd, kg::text::terminal_safe(msg).c_str(), usage);
  return 2;
}

bool parse_uint(const char* v, unsigned long long* out) {
  char* end = nullptr;
  errno = 0;
  *out = std::strtoull(v, &end, 0);
  return !errno && end && !*end && *v && *v != '-';
}

const char* command_name(EvalMode mode) {
  switch (mode) {
    case EvalMode::Repro: return "repro";
    case EvalMode::Audit: return "audit";
    default: return "eval";
  }
}

bool audit_decides(const std::string& option) {
  return option == "--policy" || option == "--self-check" || option == "--no-timing" || option == "--feedback" ||
         option == "--tolerance-sweep";
}

bool takes_value(const std::string& a, bool repro) {
  return a == "--suite" || a == "--ops" || a == "--policy" || a == "--device" || a == "--out" || a == "--seed" || a == "--runner" ||
         a == "--feedback" || a == "--jobs" || (!repro && a == "--junit") ||
         (repro && (a == "--op" || a == "--sample" || a == "--values" || a == "--index")) ||
         (!repro && (a == "--batch" || a == "--batch-list" || a == "--shard" || a == "--devices"));
}

// The overloads of --ops: comma-separated, blanks ignored.
std::vector<std::string> split_ops(const std::string& list) {
  std::vector<std::string> ops;
  std::string cur;
  for (char c : list + ",") {
    if (c == ',') {
      if (!cur.empty()) ops.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return ops;
}

// One option that takes a value. Returns -1 to go on, else the exit status.
int set_value(const std::string& a, const char* v, const char* cmd, const char* usage, EvalCli* cli) {
  auto& opt = cli->opt;
  unsigned long long n = 0;
  if (a == "--suite") opt.suite = v;
  else if (a == "--policy") cli->policy_name = v;
  else if (a == "--device") cli->device = v;
  else if (a == "--out") opt.out_dir = v;
  else if (a == "--runner") opt.runner_path = v;
  else if (a == "--feedback") cli->feedback_file = v;
  else if (a == "--junit") cli->junit_file = v;
  else if (a == "--op") cli->op = v;
  else if (a == "--batch") cli->batch_dir = v;
  else if (a == "--batch-list") cli->batch_list = v;
  else if (a == "--shard") cli->shard = v;
  else if (a == "--jobs" || a == "--devices") {
    if (!parse_uint(v, &n) || n < 1 || n > 1024) return usage_error(cmd, usage, a + " must be a number from 1 to 1024, got '" + v + "'");
    (a == "--jobs" ? opt.jobs : cli->device_pools) = static_cast<int>(n);
  } else if (a == "--sample") cli->sample = v;
  else if (a == "--values") cli->values = v;
  else if (a == "--index") {
    if (!parse_uint(v, &n) || n > 1000000) return usage_error(cmd, usage, std::string("--index must be a sample index, got '") + v + "'");
    cli->index = static_cast<long>(n);
  } else if (a == "--seed") {
    if (!parse_uint(v, &n)) return usage_error(cmd, usage, std::string("--seed must be a non-negative integer, got '") + v + "'");
    opt.seed = n;
    opt.seed_given = true;
  } else if (a == "--ops") {
    for (auto& op : split_ops(v)) opt.ops.push_back(std::move(op));
    if (opt.ops.empty()) return usage_error(cmd, usage, "--ops needs at least one overload name");
  }
  return -1;
}

// The arguments in order. Returns -1 to go on, else the exit status.
int parse_arguments(int argc, char** argv, EvalMode mode, const char* usage, EvalCli* cli) {
  const bool repro = mode == EvalMode::Repro;
  const char* cmd = command_name(mode);
  auto& opt = cli->opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      return 0;
    } else if (mode == EvalMode::Audit && audit_decides(a)) {
      return usage_error(cmd, usage, a + " is not an audit option: the audit profile decides");
    } else if (a == "--problem" && mode == EvalMode::Eval) {
      if (i + 2 >= argc || argv[i + 1][0] == '-' || argv[i + 2][0] == '-')
        return usage_error(cmd, usage, "--problem needs two paths: the problem and the solution (files or folders)");
      cli->problem = argv[++i];
      cli->solution = argv[++i];
    } else if (takes_value(a, repro)) {
      const char* v = i + 1 < argc ? argv[++i] : nullptr;
      if (!v) return usage_error(cmd, usage, a + " needs a value");
      if (int rc = set_value(a, v, cmd, usage, cli); rc >= 0) return rc;
    } else if (a == "--self-check") {
      opt.self_check = true;
    } else if (a == "--no-timing") {
      opt.timing = false;
    } else if (a == "--no-runner-pool") {
      opt.no_runner_pool = true;
    } else if (a == "--time" && repro) {
      cli->time = true;
    } else if (a == "--resume" && mode == EvalMode::Eval) {
      cli->resume = true;
    } else if (a == "--tolerance-sweep" && !repro) {
      opt.tolerance_sweep = true;
    } else if (a == "--verbose" || a == "-v") {
      opt.verbose = true;
      cli->verbosity = kg::cli::Verbosity::Verbose;
    } else if (a == "--quiet" || a == "-q") {
      cli->verbosity = kg::cli::Verbosity::Quiet;
    } else if (!a.empty() && a[0] == '-') {
      return usage_error(cmd, usage, "unknown option " + a);
    } else if (opt.submission.empty()) {
      opt.submission = a;
    } else {
      return usage_error(cmd, usage, "more than one submission directory given");
    }
  }
  return -1;
}

// The operator's path is resolved (it may be a symbolic link); nothing inside is followed.
// Returns -1 to go on, else the exit status.
int resolve_submission(const char* cmd, kg::harness::EvalOptions* opt) {
  std::error_code ec;
  const std::filesystem::path resolved = std::filesystem::canonical(opt->submission, ec);
  if (ec) {
    kg::cli::print_error(cmd, opt->submission + ": " + ec.message());
    return 2;
  }
  if (!std::filesystem::is_directory(resolved, ec)) {
    kg::cli::print_error(cmd, opt->submission + ": not a directory");
    return 2;
  }
  opt->submission = resolved.string();
  if (opt->submission.size() > 1 && opt->submission.back() == '/') opt->submission.pop_back();
  return -1;
}

// repro's one sample, from --op, --sample, --values and --index. Returns -1 to go on, else the
// exit status.
int repro_sample(const char* cmd, const char* usage, EvalCli* cli) {
  if (cli->op.empty() || cli->sample.empty()) return usage_error(cmd, usage, "--op and --sample are required");
  kg::harness::EvalOptions::Repro r;
  r.op = cli->op;
  r.index = static_cast<int>(cli->index);
  r.sample.op = cli->op;
  r.sample.label = "repro";
  if (cli->values == "normal") r.sample.family = kg::harness::ValueFamily::Normal;
  else if (cli->values == "special") r.sample.family = kg::harness::ValueFamily::Special;
  else if (cli->values == "positive") r.sample.family = kg::harness::ValueFamily::Positive;
  else return usage_error(cmd, usage, "--values must be normal, special or positive");
  try {
    r.sample.call = kg::trace::parse_call(cli->sample, "--sample");
  } catch (const std::exception& e) { return usage_error(cmd, usage, e.what()); }
  cli->opt.repro = r;
  cli->opt.timing = cli->time;
  return -1;
}

// --self-check --shard I/N: the suite's ops (or --ops) of that shard, so that a long self-check can
// be split over several processes. Returns -1 to go on, else the exit status.
int self_check_shard(const char* cmd, const char* usage, EvalCli* cli) {
  std::string error;
  const auto shard = kg::results::parse_shard(cli->shard, &error);
  if (!shard) return usage_error(cmd, usage, "--shard: " + error);
  std::vector<std::string> ops;
  try {
    ops = cli->opt.ops.empty() ? kg::harness::suite_ops(cli->opt.suite) : cli->opt.ops;
  } catch (const std::exception& e) { return usage_error(cmd, usage, e.what()); }
  cli->opt.ops.clear();
  for (const std::string& op : ops)
    if (kg::results::in_shard(*shard, "self-check", op)) cli->opt.ops.push_back(op);
  if (cli->opt.ops.empty())  // an empty --ops would mean every op
    return usage_error(cmd, usage,
                       "--shard " + cli->shard + " holds none of the " + std::to_string(ops.size()) + " ops of suite '" + cli->opt.suite +
                           "'");
  return -1;
}

// --problem P S: no submission, batch or self-check beside it; the pairs it names. Returns -1 to
// go on, else the exit status.
int kernelbench_pairs(const char* cmd, const char* usage, EvalCli* cli) {
  auto& opt = cli->opt;
  if (!opt.submission.empty() || opt.self_check || !cli->batch_dir.empty() || !cli->batch_list.empty() || !cli->shard.empty() ||
      cli->resume || cli->device_pools != 0 || !opt.ops.empty() || opt.suite != kg::harness::kAutoSuite || !cli->junit_file.empty())
    return usage_error(cmd, usage,
                       "--problem takes no submission directory, --self-check, --batch, --shard, --resume, --devices, --ops, --suite "
                       "or --junit beside it");
  if (const auto device = kg::cli::device_option(cli->device)) opt.device = *device;
  else return usage_error(cmd, usage, "--device must be cpu, cuda or auto");
  try {
    cli->pairs = kg::kernelbench::pairs(cli->problem, cli->solution, &cli->left_out);
  } catch (const std::exception& e) { return usage_error(cmd, usage, e.what()); }
  opt.submission = cli->solution;
  opt.suite = kg::kernelbench::kSuite;
  return -1;
}

}  // namespace

namespace kg::cli {

std::optional<kg::names::Device> device_option(const std::string& value) {
  if (value == "auto") return kg::harness::auto_device();
  return kg::names::try_parse_device(value);
}

bool parse_count(const std::string& value, unsigned long long max, unsigned long long* out) {
  if (value.empty() || value[0] < '0' || value[0] > '9') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || n > max) return false;
  *out = n;
  return true;
}

int parse_eval_cli(int argc, char** argv, EvalMode mode, const char* usage, EvalCli* cli) {
  const char* cmd = command_name(mode);
  auto& opt = cli->opt;
  opt.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (int rc = parse_arguments(argc, argv, mode, usage, cli); rc >= 0) return rc;
  if (!cli->problem.empty()) return kernelbench_pairs(cmd, usage, cli);
  const bool batch = !cli->batch_dir.empty() || !cli->batch_list.empty();
  if (batch && (!opt.submission.empty() || opt.self_check || !cli->batch_dir.empty() == !cli->batch_list.empty()))
    return usage_error(cmd, usage, "--batch DIR or --batch-list FILE, one of them, and no submission directory or --self-check beside it");
  if (!batch && (cli->resume || (!cli->shard.empty() && !opt.self_check) || cli->device_pools != 0))
    return usage_error(
        cmd, usage, "--resume, --shard and --devices are batch options (--batch DIR or --batch-list FILE; --shard also with --self-check)");
  if (batch && !cli->feedback_file.empty())
    return usage_error(cmd, usage, "--feedback is for one submission; a batch writes OUT/summary.md");
  if (batch) {
    if (const auto device = kg::cli::device_option(cli->device)) opt.device = *device;
    else return usage_error(cmd, usage, "--device must be cpu, cuda or auto");
    return -1;
  }
  if (opt.self_check && !opt.submission.empty()) return usage_error(cmd, usage, "--self-check takes no submission directory");
  // --self-check without --suite: the smoke suite's ops, not every op the default suite could reach.
  if (opt.self_check && opt.suite == kg::harness::kAutoSuite) opt.suite = "smoke";
  if (!opt.self_check && opt.submission.empty()) return usage_error(cmd, usage, "no submission directory given");
  if (const auto device = kg::cli::device_option(cli->device)) opt.device = *device;
  else return usage_error(cmd, usage, "--device must be cpu, cuda or auto");
  if (!opt.self_check)
    if (int rc = resolve_submission(cmd, &opt); rc >= 0) return rc;
  if (mode == EvalMode::Repro) return repro_sample(cmd, usage, cli);
  if (opt.self_check && !cli->shard.empty()) return self_check_shard(cmd, usage, cli);
  return -1;
}

void print_error(const char* cmd, const std::string& message) {
  std::fprintf(stderr, "kernelgate %s: %s\n", cmd, kg::text::terminal_safe(message).c_str());
}

bool write_text_file(const std::string& path, const std::string& text, const char* cmd) {
  try {
    write_file_atomically(path, text);
    return true;
  } catch (const std::exception& e) {
    print_error(cmd, e.what());
    return false;
  }
}

namespace {

// An empty submission says so: which folder was read, what an op folder looks like, and what was
// seen there instead.
void say_if_no_op_folders(const EvalCli& cli, const kg::harness::Report& report, const char* cmd) {
  if (cli.opt.self_check) return;
  if (!cli.problem.empty()) {
    for (const auto& [file, why] : report.problems)
      std::fprintf(stderr, "kernelgate %s: left out %s: %s\n", cmd, kg::text::terminal_safe(file).c_str(),
                   kg::text::terminal_safe(why).c_str());
    if (report.ops.empty()) print_error(cmd, cli.problem + " and " + cli.solution + ": no problem with a solution to judge");
    return;
  }
  if (!report.ops.empty()) return;
  std::string msg = cli.opt.submission +
                    ": no op folders (expected NAME__OVERLOAD/NAME__OVERLOAD_implementation*.cpp or .cu, "
                    "e.g. relu__default/relu__default_implementation.cpp)";
  print_error(cmd, msg);
  for (const auto& [folder, why] : report.problems)
    std::fprintf(stderr, "  seen %s: %s\n", kg::text::terminal_safe(folder).c_str(), kg::text::terminal_safe(why).c_str());
}

}  // namespace

int evaluate_to_results(const EvalCli& cli, const char* cmd, kg::policy::Policy* policy, kg::harness::Report* report) {
  const std::filesystem::path out = cli.opt.out_dir;
  const std::string path = (out / "results.json").string();
  try {
    // A previous run's output goes before this run starts: whatever a reader finds later is this run's.
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec) throw std::runtime_error(out.string() + ": cannot create: " + ec.message());
    remove_previous_output(path);
    for (const auto& name : cli.extra_outputs) remove_previous_output((out / name).string());
    if (!cli.feedback_file.empty()) remove_previous_output(cli.feedback_file);
    if (!cli.junit_file.empty()) remove_previous_output(cli.junit_file);
    *policy = kg::policy::load(cli.policy_name);
    ProgressLine progress(cli.verbosity);  // cleared before the table is printed
    kg::harness::EvalOptions opt = cli.opt;
    if (!opt.no_runner_pool && !opt.runner_pool && cli.problem.empty())
      if ((opt.runner_pool = take_warm_runner_pool(opt, *policy))) opt.runner_pool_exclusive = true;
    opt.on_progress = [&progress](const kg::harness::EvalProgress& p) { progress.update(p); };
    if (cli.problem.empty()) {
      *report = kg::harness::evaluate(opt, *policy);
    } else {
      *report = kg::kernelbench::evaluate(cli.pairs, opt, *policy);
      report->problems = cli.left_out;
    }
  } catch (const std::exception& e) {
    print_error(cmd, e.what());
    return 2;
  }
  say_if_no_op_folders(cli, *report, cmd);
  if (!write_text_file(path, kg::harness::report_json(*report), cmd)) return 2;
  if (!cli.feedback_file.empty() && !write_text_file(cli.feedback_file, kg::harness::report_feedback(*report), cmd)) return 2;
  return -1;
}

}  // namespace kg::cli

namespace {

int run(const EvalCli& cli) {
  const char* cmd = cli.opt.repro ? "repro" : "eval";
  kg::policy::Policy policy;
  kg::harness::Report report;
  if (int rc = kg::cli::evaluate_to_results(cli, cmd, &policy, &report); rc >= 0) return rc;
  if (!cli.opt.repro && !kg::cli::write_submission_reports(cli, report, true, cmd)) return 2;
  if (!cli.opt.repro && !kg::cli::write_report_html(cli.opt.out_dir, false, cmd)) return 2;
  if (cli.verbosity != kg::cli::Verbosity::Quiet) {
    std::cout << kg::harness::report_table(report);
    std::cout << "\nresults: " << (std::filesystem::path(cli.opt.out_dir) / "results.json").string() << "\n";
  }
  return kg::harness::report_exit_code(report);
}

}  // namespace

int kg_cmd_eval(int argc, char** argv) {
  EvalCli cli;
  int rc = kg::cli::parse_eval_cli(argc, argv, EvalMode::Eval, kEvalUsage, &cli);
  if (rc >= 0) return rc;
  if (cli.batch_dir.empty() && cli.batch_list.empty()) {
    cli.extra_outputs = {"summary.csv", "summary.md", "report.html"};
    return run(cli);
  }
  return kg::cli::run_batch_cli(cli);
}

int kg_cmd_repro(int argc, char** argv) {
  EvalCli cli;
  cli.opt.out_dir = "kernelgate-repro";
  int rc = kg::cli::parse_eval_cli(argc, argv, EvalMode::Repro, kReproUsage, &cli);
  return rc >= 0 ? rc : run(cli);
}

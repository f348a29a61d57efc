// The evaluating commands' shared path (eval, repro, audit; defined in cmd_eval.cc): one option
// parser, one evaluation that writes OUT/results.json, so every command judges the same way.
#pragma once

#include "kernelgate/harness.h"
#include "kernelgate/kernelbench.h"
#include "kernelgate/policy.h"
#include "progress_line.h"

#include <optional>
#include <string>
#include <vector>

namespace kg::cli {

enum class EvalMode { Eval, Repro, Audit };

struct EvalCli {
  kg::harness::EvalOptions opt;
  std::string policy_name = kg::policy::kDefaultProfile;
  std::string feedback_file;
  std::string junit_file;                   // --junit FILE (eval, audit): JUnit XML of the run
  Verbosity verbosity = Verbosity::Normal;  // --quiet: no progress, no table; --verbose: a line per op
  std::string device = "cpu";               // --device as given: cpu, cuda or auto (resolved into opt.device)
  std::vector<std::string> extra_outputs;   // files in OUT besides results.json this command writes
  std::string op, sample, values = "normal";
  long index = 0;
  bool time = false;  // repro: also time the sample (candidate and eager)
  // A batch (eval only): --batch DIR or --batch-list FILE, with --shard, --resume, --devices.
  std::string batch_dir, batch_list, shard;
  bool resume = false;
  int device_pools = 0;  // --devices; 0: the default (every visible GPU, or one CPU pool)
  // --problem PROBLEM SOLUTION (eval only): KernelBench pairs (two files, or two folders matched
  // by name) instead of a submission directory; resolved into `pairs` and `left_out`.
  std::string problem, solution;
  std::vector<kg::kernelbench::Pair> pairs;
  std::vector<std::pair<std::string, std::string>> left_out;
};

// `kernelgate eval --batch`: every submission of the batch into OUT (cmd_batch.cc). The exit status.
int run_batch_cli(const EvalCli& cli);

// Parses the options of `mode` (audit takes no --policy, --self-check, --no-timing, --feedback,
// --tolerance-sweep: the audit profile decides). Returns -1 to go on, else the exit status.
int parse_eval_cli(int argc, char** argv, EvalMode mode, const char* usage, EvalCli* cli);

// Removes a previous run's OUT/results.json, extra_outputs and feedback file, loads the policy,
// evaluates and writes OUT/results.json (and the feedback file) atomically. Returns -1 on
// success, else the exit status (2: configuration error or an unwritable file, with a message).
int evaluate_to_results(const EvalCli& cli, const char* cmd, kg::policy::Policy* policy, kg::harness::Report* report);

// Writes `text` to `path` atomically; false (with a message naming `cmd`, the path and the errno)
// when it cannot.
bool write_text_file(const std::string& path, const std::string& text, const char* cmd);

// --device's value: cpu, cuda, or auto (cuda when a CUDA device is usable here, else cpu);
// nullopt for anything else.
std::optional<kg::names::Device> device_option(const std::string& value);

// A decimal count of at most `max` (no sign, no other base); false when `value` is not one.
bool parse_count(const std::string& value, unsigned long long max, unsigned long long* out);

// A message on stderr, "kernelgate CMD: MESSAGE", with control characters escaped.
void print_error(const char* cmd, const std::string& message);

}  // namespace kg::cli

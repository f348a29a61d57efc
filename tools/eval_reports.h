// The reports an evaluating command writes beside results.json, made from it: OUT/summary.csv and
// OUT/summary.md for one submission (as a batch writes them), and the --junit file.
#pragma once

#include "eval_cli.h"

#include "kernelgate/junit.h"

#include <string>
#include <vector>

namespace kg::cli {

// Reads OUT/results.json back and writes, when `summaries`, OUT/summary.csv and OUT/summary.md,
// and when --junit was given, that file. False (with a message naming `cmd` and the file) when
// results.json cannot be read back or a file cannot be written.
bool write_submission_reports(const EvalCli& cli, const harness::Report& report, bool summaries, const char* cmd);

// The JUnit XML of `submissions` to `path`, written atomically; each op's testcases are named from
// `suite`'s samples. False with a message when it cannot be written.
bool write_junit(const std::string& path, const std::vector<results::JunitSubmission>& submissions, const std::string& suite,
                 const char* cmd);

}  // namespace kg::cli

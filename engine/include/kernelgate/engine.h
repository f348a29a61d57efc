// kernelgate engine: many submissions in one process (`kernelgate eval --batch`). Builds run ahead
// in parallel across ops and submissions, bounded by --jobs; each device pool runs one op at a time
// when timing (a runner per op, as for one submission); every decided op goes to the journal at
// once; --shard picks a stable subset; --resume finishes a killed run without re-judging.
#pragma once

#include "kernelgate/harness.h"
#include "kernelgate/results.h"

#include <functional>
#include <string>
#include <vector>

namespace kg::engine {

// One submission of a batch: its directory and the folder name its results go under (OUT/<name>).
struct Submission {
  std::string name;
  std::string dir;
};

// Every directory directly inside `dir` (symbolic links to directories included), sorted by name.
// Throws std::runtime_error naming `dir` when it cannot be read or holds no directory.
std::vector<Submission> submissions_in(const std::string& dir);
// The directories listed in `file`, one path a line (relative to the file's folder unless absolute;
// blank lines and lines starting with '#' ignored). Names are the last path component, made unique
// with "-2", "-3" in list order. Throws std::runtime_error "FILE:LINE: problem" for a path that is not
// a directory, and naming FILE when it cannot be read or lists nothing.
std::vector<Submission> submissions_listed(const std::string& file);

struct BatchOptions {
  harness::EvalOptions eval;  // suite, ops, device, seed, timing, runner; submission and out_dir unused
  std::vector<Submission> submissions;
  std::string out_dir;
  int jobs = 1;          // builds at once over the whole batch, and submissions in flight
  int device_pools = 0;  // cuda: GPUs used (0: every visible one); CPU: simulated pools (0: one)
  results::Shard shard;  // 0/1: everything
  bool resume = false;
  // The batch's progress (a terminal's progress line): ops decided of every op the batch judges,
  // and the op last reported, named "SUBMISSION: OP". Called from the workers, one call at a time.
  std::function<void(const harness::EvalProgress&)> on_progress;
};

struct BatchOutcome {
  std::vector<results::BatchEntry> entries;  // this shard's submissions, in batch order
  results::RunIdentity identity;
};

// Runs the batch and writes OUT/<name>/results.json for each submission with work in this shard,
// OUT/journal.jsonl, and OUT/summary.json, summary.csv, summary.md (all written atomically).
// Throws std::runtime_error for what stops the whole batch (an unwritable OUT, a journal of another
// run, a corrupt journal); a broken submission is that submission's result.
BatchOutcome run_batch(const BatchOptions& options, const policy::Policy& policy);

// The run identity of a batch (results.h), as its journal and summary.json record it.
results::RunIdentity batch_identity(const BatchOptions& options, const policy::Policy& policy, uint64_t seed);

}  // namespace kg::engine

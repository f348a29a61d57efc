// kernelgate results: the JSON documents an evaluation writes and reads back. results.json's
// summary, a batch's summaries (summary.json, summary.csv, summary.md), the journal a run appends
// each decided op to, shard assignment, and the merge of shard outputs. Torch-free: everything here
// works on the documents as JSON, so `kernelgate merge` and the journal never need libtorch.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kg::results {

using json = nlohmann::json;

// ---- one submission: results.json -----------------------------------------------------------

// results.json's "summary" object from its "ops" array (results.json's per-op objects) and the
// run's wall time: op and test counts, fraction correct, fast_p, geomean speedup of correct ops.
json summary_of_ops(const json& ops, double wall_s);

// Reads a JSON document kernelgate wrote (results.json, summary.json). Throws std::runtime_error
// naming the file and the problem (unreadable, not JSON, not an object).
json read_document(const std::string& path);

// ---- what a run is: the fields that must match to merge its shards or resume it ------------

struct RunIdentity {
  std::string kernelgate_version;
  std::string torch_version;
  std::string device;
  std::string suite;
  std::string policy;
  uint64_t seed = 0;
  bool timing = true;
  std::vector<std::string> ops;  // --ops, empty: every op folder
  int shard_index = 0;           // --shard I/N (0 of 1: the whole run)
  int shard_count = 1;
};
json identity_json(const RunIdentity& id);
// Throws std::runtime_error "SOURCE: FIELD: problem" for a missing or mistyped field.
RunIdentity identity_from_json(const json& j, const std::string& source);
// The first field (other than the shard) in which two runs differ, as "FIELD (A vs B)"; "" when
// they are the same run.
std::string identity_mismatch(const RunIdentity& a, const RunIdentity& b);

// ---- a batch: OUT/summary.json, OUT/summary.csv, OUT/summary.md -----------------------------

struct BatchEntry {
  std::string name;  // the submission's folder under OUT (OUT/<name>/results.json)
  json results;      // that results.json's document
};
// Per submission and per op: verdict, tests, speedup, rules; totals over the batch; the identity.
json batch_summary_json(const RunIdentity& id, const std::vector<BatchEntry>& entries);
// One row per (submission, op), BackendBench's operator-summary column names where they apply.
std::string batch_summary_csv(const std::vector<BatchEntry>& entries);
std::string batch_summary_markdown(const RunIdentity& id, const std::vector<BatchEntry>& entries);
// The same files for one submission (`kernelgate eval DIR`): batch_summary_csv of the one entry,
// and this Markdown, titled for one submission.
std::string submission_summary_markdown(const RunIdentity& id, const BatchEntry& entry);
// 0 when every op of every submission passed, else 1 (as for one submission: an empty batch or a
// submission without ops is 1).
int batch_exit_code(const std::vector<BatchEntry>& entries);

// ---- shards ---------------------------------------------------------------------------------

struct Shard {
  int index = 0;  // 0-based
  int count = 1;
};
// "I/N" with 0 <= I < N; nullopt with *error set otherwise.
std::optional<Shard> parse_shard(const std::string& text, std::string* error);
// SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT when both are set (the task id taken relative to
// SLURM_ARRAY_TASK_MIN when that is set); nullopt when neither is set; *error set when they are
// malformed.
std::optional<Shard> shard_from_environment(std::string* error);
// Whether (submission, op) belongs to the shard: SHA-256 of the two names, never a seeded hash, so
// every process and machine agrees.
bool in_shard(const Shard& shard, const std::string& submission, const std::string& op);

// ---- the journal: OUT/journal.jsonl ---------------------------------------------------------

// One JSON document per line: the run's identity first, then one line per decided op
// {"submission": NAME, "op": <results.json's per-op object>}. Each line is written whole and
// synced before append() returns, so a kill at any moment loses no decided op; a torn last line
// (the kill came mid-write) is dropped on resume.
class Journal {
 public:
  struct Entry {
    std::string submission;
    json op;
  };
  // Opens the journal at `path`. Without `resume`, any earlier journal there is replaced by a new
  // one holding only `identity`. With `resume`, the decided entries are read first (decided()); a
  // journal of another run (identity_mismatch) or a corrupt line other than a torn last one throws
  // std::runtime_error naming the file (and line) and the problem; a missing journal starts a new one.
  static std::unique_ptr<Journal> open(const std::string& path, const RunIdentity& identity, bool resume);
  virtual ~Journal() = default;
  virtual const std::vector<Entry>& decided() const = 0;
  // Thread-safe. Throws std::runtime_error when the line cannot be written and synced.
  virtual void append(const std::string& submission, const json& op) = 0;
};

// ---- merge (`kernelgate merge`) -------------------------------------------------------------

// Combines shard outputs (each a batch's OUT folder: summary.json and <name>/results.json) into
// out_dir: one results.json per submission with the ops of every shard, and the batch summaries.
// Throws std::runtime_error naming the folder and field when the shards are not of one run
// (identity_mismatch), a shard is missing or repeated, or a file is unreadable. Returns the
// entries written.
std::vector<BatchEntry> merge(const std::vector<std::string>& shard_dirs, const std::string& out_dir);

// Writes `text` to `path` through a temporary file in the same folder and a rename, so a reader
// never sees a half-written file. Throws std::runtime_error naming the path.
void write_atomically(const std::string& path, const std::string& text);

}  // namespace kg::results

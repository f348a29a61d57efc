// What the summary and merge tests share: per-op objects shaped as results.json writes them, whole
// results.json documents, and shard output folders (summary.json plus <name>/results.json) written
// into a scratch folder.
#pragma once

#include "kernelgate/results.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kg::results::testing {

namespace fs = std::filesystem;

// One per-op object of results.json. A speedup comes with one timing entry per sample speedup.
inline json op_json(const std::string& name, const std::string& verdict, int total, int passed,
                    std::optional<double> speedup = std::nullopt, std::vector<std::string> rules = {},
                    std::vector<std::string> categories = {}, std::vector<double> sample_speedups = {}) {
  json violations = json::array();
  for (const auto& r : rules) violations.push_back({{"rule", r}, {"evidence", "seen " + r}});
  json failures = json::array();
  for (const auto& c : categories)
    failures.push_back({{"category", c}, {"evidence", {{"message", c + " here"}, {"max_abs_err", 0.5}, {"max_rel_err", 0.25}}}});
  json timing = json::array();
  for (double s : sample_speedups) timing.push_back({{"sample", "s"}, {"speedup", s}});
  return {{"op", name},
          {"kind", "cpu"},
          {"verdict", verdict},
          {"tests", {{"total", total}, {"passed", passed}, {"skipped", 0}}},
          {"skipped", json::array()},
          {"failures", failures},
          {"violations", violations},
          {"speedup", speedup ? json(*speedup) : json(nullptr)},
          {"timing", timing},
          {"failure_traits", json::object()},
          {"build_seconds", 0.25},
          {"build_cache_hit", false},
          {"eval_seconds", 0.5}};
}

// A smoke-suite run on the CPU, as the results tests' runs are unless a test changes a field.
inline RunIdentity smoke_identity(uint64_t seed = 7, bool timing = false) {
  RunIdentity id;
  id.kernelgate_version = "0.9.0";
  id.torch_version = "2.5.1";
  id.device = "cpu";
  id.suite = "smoke";
  id.policy = "competition";
  id.seed = seed;
  id.timing = timing;
  return id;
}

inline RunIdentity run_identity(int index = 0, int count = 1) {
  RunIdentity id = smoke_identity(1, true);
  id.shard_index = index;
  id.shard_count = count;
  return id;
}

// A results.json document as kernelgate eval writes it for `ops` of submission /subs/NAME.
inline json results_json(const RunIdentity& id, const std::string& name, const json& ops, double wall_s) {
  return {{"kernelgate_version", id.kernelgate_version},
          {"torch_version", id.torch_version},
          {"device", id.device},
          {"suite", id.suite},
          {"policy", id.policy},
          {"submission", "/subs/" + name},
          {"seed", id.seed},
          {"problems", json::array({{{"folder", "notes"}, {"problem", "not an op folder name"}}})},
          {"summary", summary_of_ops(ops, wall_s)},
          {"ops", ops}};
}

inline void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

inline std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

inline json read_json(const fs::path& p) { return json::parse(read_text(p)); }

// One shard's output folder: <name>/results.json for each submission and summary.json.
inline void write_shard(const fs::path& dir, const RunIdentity& id, const std::map<std::string, json>& ops_by_submission,
                        double wall_s = 1.0) {
  std::vector<BatchEntry> entries;
  for (const auto& [name, ops] : ops_by_submission) {
    entries.push_back({name, results_json(id, name, ops, wall_s)});
    write_text(dir / name / "results.json", entries.back().results.dump(2) + "\n");
  }
  write_text(dir / "summary.json", batch_summary_json(id, entries).dump(2) + "\n");
}

// An empty scratch folder, per test.
inline fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("kg-results-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace kg::results::testing

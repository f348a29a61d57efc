// `kernelgate merge --out OUT SHARD_OUT...`: the outputs of `kernelgate eval --shard I/N` combined
// into the output of the whole run (kg::results::merge).
#include "kernelgate/results.h"
#include "kernelgate/text_safety.h"

#include <cstdio>
#include <string>
#include <vector>

namespace {

const char* kMergeUsage =
    "usage: kernelgate merge --out OUT SHARD_OUT...\n"
    "\n"
    "Combines the output folders of the shards of one run (`kernelgate eval --shard I/N --out\n"
    "SHARD_OUT`, each with summary.json and <submission>/results.json) into OUT: one\n"
    "OUT/<submission>/results.json (and report.html) holding the ops of every shard, and\n"
    "OUT/summary.json, OUT/summary.csv, OUT/summary.md and OUT/report.html (a leaderboard) over the\n"
    "whole run. Refuses, writing nothing, when the\n"
    "shards are not of one run (policy, suite, kernelgate or torch version, device, seed, timing,\n"
    "--ops), their shard counts differ, a shard is given twice or missing, an op was judged by two\n"
    "shards, or a file is unreadable or corrupt; the error names the folder and the field.\n"
    "\n"
    "example:\n"
    "  kernelgate eval --batch subs --shard 0/2 --out out-0\n"
    "  kernelgate eval --batch subs --shard 1/2 --out out-1\n"
    "  kernelgate merge --out out out-0 out-1\n"
    "\n"
    "Exit status: 0 every op of every submission passed, 1 otherwise (a failed, rejected or\n"
    "errored op, a submission without ops, no submissions), 2 bad usage, mismatched shards or an\n"
    "unreadable file.\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "kernelgate merge: %s\n\n%s", kg::text::terminal_safe(msg).c_str(), kMergeUsage);
  return 2;
}

}  // namespace

int kg_cmd_merge(int argc, char** argv) {
  std::string out;
  std::vector<std::string> shards;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kMergeUsage, stdout);
      return 0;
    } else if (a == "--out") {
      if (i + 1 >= argc) return usage_error("--out needs a folder");
      if (!out.empty()) return usage_error("--out given twice");
      out = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option " + a);
    } else {
      shards.push_back(a);
    }
  }
  if (out.empty()) return usage_error("no --out folder given");
  if (shards.empty()) return usage_error("no shard output folders given");
  std::vector<kg::results::BatchEntry> entries;
  try {
    entries = kg::results::merge(shards, out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelgate merge: %s\n", kg::text::terminal_safe(e.what()).c_str());
    return 2;
  }
  const int status = kg::results::batch_exit_code(entries);
  std::printf("merged %zu shard folders: %zu submissions into %s (summary.json, summary.csv, summary.md, report.html)\n", shards.size(),
              entries.size(), kg::text::terminal_safe(out).c_str());
  return status;
}

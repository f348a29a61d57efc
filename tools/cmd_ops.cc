// `kernelgate ops [--suite NAME] [--all] [--left-out]`: the aten overloads of the linked libtorch
// that the suites cover, with each suite's sample count, and per-suite totals.
#include "kernelgate/harness.h"
#include "kernelgate/names.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

const char* kOpsUsage =
    "usage: kernelgate ops [--suite NAME|PATH] [--all] [--left-out]\n"
    "\n"
    "Lists the aten overloads of the linked libtorch that the suites cover, with the number of\n"
    "samples each suite has for each, then per-suite totals.\n"
    "  --suite NAME   only this suite (smoke, edge, edge-large, opinfo, traces, or a PATH: a trace\n"
    "                 file in BackendBench's format or a directory of them)\n"
    "  --all          every aten overload of the linked libtorch, covered or not\n"
    "  --left-out     also list what a suite's data names but leaves out, with the reason: overloads,\n"
    "                 and each sample (\"op at file:line\") over the 2^26-element bound or that no\n"
    "                 tensor can be built for (evaluation reports the latter as skipped)\n"
    "Example: kernelgate ops --suite edge --left-out | grep softmax\n"
    "Exit status: 0, or 2 for bad usage or an unknown suite.\n";

// The profile spelling of an aten overload ("add.Tensor"); "" for another namespace's.
std::string dispatcher_name(const c10::OperatorName& n) {
  const auto op = kg::names::OpName::from_dispatcher(n.name, n.overload_name);
  return op ? op->profile() : "";
}

}  // namespace

int kg_cmd_ops(int argc, char** argv) {
  std::vector<std::string> suites;
  bool all = false, left_out = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kOpsUsage, stdout);
      return 0;
    } else if (a == "--suite" && i + 1 < argc) {
      suites.push_back(argv[++i]);
    } else if (a == "--all") {
      all = true;
    } else if (a == "--left-out") {
      left_out = true;
    } else {
      std::fprintf(stderr, "kernelgate ops: unknown argument '%s'\n\n%s", a.c_str(), kOpsUsage);
      return 2;
    }
  }
  if (suites.empty()) suites = kg::harness::suite_names();

  // overload -> suite -> samples
  std::map<std::string, std::map<std::string, size_t>> table;
  std::map<std::string, size_t> sample_totals;
  std::map<std::string, std::string> unavailable;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> left;
  for (const auto& s : suites) {
    try {
      for (const auto& op : kg::harness::suite_ops(s)) {
        size_t n = kg::harness::suite_samples(s, op).size();
        table[op][s] = n;
        sample_totals[s] += n;
      }
      left[s] = kg::harness::suite_left_out(s);
    } catch (const std::exception& e) {
      if (kg::harness::suite_description(s).empty() || kg::harness::suite_is_path(s)) {
        std::fprintf(stderr, "kernelgate ops: %s\n", e.what());
        return 2;
      }
      unavailable[s] = e.what();
    }
  }
  if (all)
    for (const auto& n : c10::Dispatcher::singleton().getAllOpNames()) {
      std::string op = dispatcher_name(n);
      if (!op.empty()) table[op];
    }

  size_t width = 8;
  for (const auto& kv : table) width = std::max(width, kv.first.size());
  std::printf("%-*s", static_cast<int>(width), "overload");
  for (const auto& s : suites) std::printf("  %10s", s.c_str());
  std::printf("\n");
  for (const auto& [op, counts] : table) {
    std::printf("%-*s", static_cast<int>(width), op.c_str());
    for (const auto& s : suites) {
      auto it = counts.find(s);
      if (it == counts.end()) std::printf("  %10s", "-");
      else std::printf("  %10zu", it->second);
    }
    std::printf("\n");
  }
  std::printf("\n%-12s %10s %10s %10s  %s\n", "suite", "overloads", "samples", "left out", "");
  for (const auto& s : suites) {
    if (unavailable.count(s)) {
      std::printf("%-12s %10s %10s %10s  unavailable: %s\n", s.c_str(), "-", "-", "-", unavailable[s].c_str());
      continue;
    }
    size_t ops = 0;
    for (const auto& kv : table) ops += kv.second.count(s);
    std::printf("%-12s %10zu %10zu %10zu  %s\n", s.c_str(), ops, sample_totals[s], left[s].size(),
                kg::harness::suite_description(s).c_str());
  }
  if (all) {
    size_t covered = 0;
    for (const auto& kv : table) covered += !kv.second.empty();
    std::printf("%-12s %10zu of %zu aten overloads in the linked libtorch\n", "any suite", covered, table.size());
  }
  if (left_out)
    for (const auto& s : suites)
      for (const auto& [op, why] : left[s]) std::printf("left out of %s: %s: %s\n", s.c_str(), op.c_str(), why.c_str());
  return 0;
}

// kg_bench_build: median build time per kind, cold (a source never built before) and cached,
// through kernelgate's real path (sandboxed compile, cache). Not a test.
//
//   kg_bench_build [--reps N] [--kinds cpu,cuda,nvrtc]
#include "loader_test_util.h"
#include "util.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>

using namespace kg::loader;
using namespace kg::loader::test;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::map<std::string, std::string> relu_files(Kind kind, const std::string& tag) {
  if (kind == Kind::Cpu)
    return {{"relu__default_implementation.cpp", tag + read(example_dir("correct/relu__default/relu__default_implementation.cpp"))}};
  if (kind == Kind::Cuda)
    return {{"relu__default_implementation.cu", tag + read(example_dir("cuda/correct/relu__default/relu__default_implementation.cu"))}};
  return {{"relu__default_implementation.cu", tag + read(example_dir("nvrtc/correct/relu__default/relu__default_implementation.cu"))},
          {"kernelgate.toml", read(example_dir("nvrtc/correct/relu__default/kernelgate.toml"))}};
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  std::vector<Kind> kinds = {Kind::Cpu, Kind::Cuda, Kind::Nvrtc};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--kinds" && i + 1 < argc) {
      kinds.clear();
      std::string list = argv[++i], cur;
      for (char c : list + ",") {
        Kind k;
        if (c != ',') cur += c;
        else if (parse_kind(cur, &k)) kinds.push_back(k), cur.clear();
        else if (!cur.empty()) return std::fprintf(stderr, "unknown kind %s\n", cur.c_str()), 2;
      }
    } else return std::fprintf(stderr, "usage: kg_bench_build [--reps N] [--kinds cpu,cuda,nvrtc]\n"), 2;
  }
  std::mt19937_64 rng(std::random_device{}());
  std::printf("%-6s %5s %12s %12s   (relu.default, sandboxed, seconds)\n", "kind", "reps", "cold_median", "cached_median");
  for (Kind kind : kinds) {
    if (!kind_unavailable(kind).empty()) {
      std::printf("%-6s skipped: %s\n", kind_name(kind), kind_unavailable(kind).c_str());
      continue;
    }
    // One untimed build first: the precompiled prelude, the shim and nvcc's dry run are per-machine set-up.
    {
      TempDir d;
      build(make_op(d.path, "relu.default", relu_files(kind, "// warm-up " + std::to_string(rng()) + "\n")), options(d.path));
    }
    // cuda: also nvcc run whole (its steps one after another), in the same reps, for the ratio.
    std::vector<bool> whole = {false};
    if (kind == Kind::Cuda) whole.push_back(true);
    std::vector<std::vector<double>> cold(whole.size()), cached(whole.size());
    std::vector<std::string> notes(whole.size());
    std::vector<std::map<std::string, std::vector<double>>> steps(whole.size());
    std::vector<std::vector<std::string>> step_order(whole.size());
    for (int i = 0; i < reps; ++i)
      for (size_t w = 0; w < whole.size(); ++w) {
        TempDir d;
        OpFolder op = make_op(d.path, "relu.default", relu_files(kind, "// bench " + std::to_string(rng()) + "\n"));
        BuildOptions o = options(d.path);
        o.nvcc_whole = whole[w];
        BuildResult a = build(op, o);
        if (!a.ok) return std::fprintf(stderr, "%s build failed: %s\n", kind_name(kind), a.error.c_str()), 1;
        cold[w].push_back(a.seconds);
        notes[w] = join(a.notes, "; ");
        for (const auto& [step, seconds] : a.steps) {
          if (!steps[w].count(step)) step_order[w].push_back(step);
          steps[w][step].push_back(seconds);
        }
        if (!a.steps.empty()) steps[w]["sandbox and set-up"].push_back(a.seconds - a.steps.back().second);
        for (int j = 0; j < 5; ++j) {
          BuildResult b = build(op, o);
          if (!b.cache_hit) return std::fprintf(stderr, "%s: expected a cache hit\n", kind_name(kind)), 1;
          cached[w].push_back(b.seconds);
        }
      }
    for (size_t w = 0; w < whole.size(); ++w)
      std::printf("%-6s %5d %12.3f %12.4f%s\n", kind_name(kind), reps, median(cold[w]), median(cached[w]),
                  whole[w] ? "   (nvcc whole, for comparison)" : "");
    for (size_t w = 0; w < whole.size(); ++w)
      if (!notes[w].empty()) std::printf("%s%s notes: %s\n", kind_name(kind), whole[w] ? " (nvcc whole)" : "", notes[w].c_str());
    for (size_t w = 0; w < whole.size(); ++w) {
      if (steps[w].empty()) continue;
      step_order[w].push_back("sandbox and set-up");
      std::printf("%s%s cold, median seconds per step:", kind_name(kind), whole[w] ? " (nvcc whole)" : "");
      for (const auto& step : step_order[w]) std::printf(" %s %.3f", step.c_str(), median(steps[w][step]));
      std::printf("\n");
    }
    if (whole.size() == 2) std::printf("cuda cold: chains side by side / nvcc whole = %.2f\n", median(cold[0]) / median(cold[1]));
    std::fflush(stdout);
  }
  return 0;
}

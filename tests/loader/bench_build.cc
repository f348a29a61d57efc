// kg_bench_build: median build time per kind, cold (a source never built before) and cached,
// through kernelgate's real path (sandboxed compile, cache). Not a test. Besides the bundled
// example, the cpu and cuda kinds build it with one more standard header included ahead of its
// source, as real submissions do (<torch/extension.h>, <ATen/ATen.h>, and for cuda
// <ATen/cuda/CUDAContext.h>, <c10/cuda/CUDAStream.h>). `--first` also times the first build on a
// fresh cache root, the toolchain's one-time set-up included.
//
//   kg_bench_build [--reps N] [--kinds cpu,cuda,nvrtc] [--headers a.h,b.h | --headers none] [--first]
#include "kg_build_config.h"
#include "loader_test_util.h"
#include "util.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

using namespace kg::loader;
using namespace kg::loader::test;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The bundled relu example of `kind`; `header` (when not empty) is included ahead of its source.
std::map<std::string, std::string> relu_files(Kind kind, const std::string& tag, const std::string& header = "") {
  const std::string head = tag + (header.empty() ? "" : "#include <" + header + ">\n");
  if (kind == Kind::Cpu)
    return {{"relu__default_implementation.cpp", head + read(example_dir("correct/relu__default/relu__default_implementation.cpp"))}};
  if (kind == Kind::Cuda)
    return {{"relu__default_implementation.cu", head + read(example_dir("cuda/correct/relu__default/relu__default_implementation.cu"))}};
  return {{"relu__default_implementation.cu", head + read(example_dir("nvrtc/correct/relu__default/relu__default_implementation.cu"))},
          {"kernelgate.toml", read(example_dir("nvrtc/correct/relu__default/kernelgate.toml"))}};
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : list + ",") {
    if (c != ',') cur += c;
    else if (!cur.empty()) out.push_back(cur), cur.clear();
  }
  return out;
}

struct Row {
  std::vector<double> cold, cached;
  std::string notes;
  std::map<std::string, std::vector<double>> steps;
  std::vector<std::string> step_order;
};

std::mt19937_64& rng() {
  static std::mt19937_64 r(std::random_device{}());
  return r;
}

// One cold build of a never-seen source and five cached ones into `row`; false (after saying why) on failure.
// `plain`: for cuda, nvcc run whole (the example) or the source's includes compiled with the unit
// (BuildOptions::precompiled_includes off: the build as it was before they joined the prefix).
bool measure_once(Kind kind, const std::string& header, bool plain, Row& row) {
  TempDir d;
  OpFolder op = make_op(d.path, "relu.default", relu_files(kind, "// bench " + std::to_string(rng()()) + "\n", header));
  BuildOptions o = options(d.path);
  if (plain && header.empty()) o.nvcc_whole = true;
  if (plain && !header.empty()) o.precompiled_includes = false;
  BuildResult a = build(op, o);
  if (!a.ok) return std::fprintf(stderr, "%s %s build failed: %s\n", kind_name(kind), header.c_str(), a.error.c_str()), false;
  row.cold.push_back(a.seconds);
  row.notes = join(a.notes, "; ");
  for (const auto& [step, seconds] : a.steps) {
    if (!row.steps.count(step)) row.step_order.push_back(step);
    row.steps[step].push_back(seconds);
  }
  if (!a.steps.empty()) row.steps["sandbox and set-up"].push_back(a.seconds - a.steps.back().second);
  for (int j = 0; j < 5; ++j) {
    BuildResult b = build(op, o);
    if (!b.cache_hit) return std::fprintf(stderr, "%s: expected a cache hit\n", kind_name(kind)), false;
    row.cached.push_back(b.seconds);
  }
  return true;
}

void print_row(Kind kind, const std::string& label, int reps, Row& row) {
  std::printf("%-6s %5d %12.3f %12.4f   %s\n", kind_name(kind), reps, median(row.cold), median(row.cached), label.c_str());
  if (!row.notes.empty()) std::printf("       notes: %s\n", row.notes.c_str());
  if (row.steps.empty()) return;
  row.step_order.push_back("sandbox and set-up");
  std::printf("       cold, median seconds per step:");
  for (const auto& step : row.step_order) std::printf(" %s %.3f", step.c_str(), median(row.steps[step]));
  std::printf("\n");
}

// The first build of `kind` on a fresh cache root: the toolchain's set-up (prelude, shim, nvcc's
// dry run, the host prefix) is part of it.
bool first_build(Kind kind) {
  TempDir root, d;
  const char* old = std::getenv("KERNELGATE_CACHE");
  const std::string saved = old ? old : "";
  setenv("KERNELGATE_CACHE", root.path.c_str(), 1);
  OpFolder op = make_op(d.path, "relu.default", relu_files(kind, "// first " + std::to_string(rng()()) + "\n"));
  BuildOptions o = options(d.path);
  o.cache_dir = root.path + "/builds";
  BuildResult a = build(op, o);
  if (old) setenv("KERNELGATE_CACHE", saved.c_str(), 1);
  else unsetenv("KERNELGATE_CACHE");
  if (!a.ok) return std::fprintf(stderr, "%s first build failed: %s\n", kind_name(kind), a.error.c_str()), false;
  std::printf("%-6s %5d %12.3f %12s   first build, fresh cache root\n", kind_name(kind), 1, a.seconds, "-");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  bool first = false, headers_given = false;
  std::vector<Kind> kinds = {Kind::Cpu, Kind::Cuda, Kind::Nvrtc};
  std::vector<std::string> headers;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--first") first = true;
    else if (a == "--headers" && i + 1 < argc) {
      headers_given = true;
      headers = std::string(argv[++i]) == "none" ? std::vector<std::string>{} : split_list(argv[i]);
    } else if (a == "--kinds" && i + 1 < argc) {
      kinds.clear();
      for (const auto& name : split_list(argv[++i])) {
        Kind k;
        if (!parse_kind(name, &k)) return std::fprintf(stderr, "unknown kind %s\n", name.c_str()), 2;
        kinds.push_back(k);
      }
    } else
      return std::fprintf(stderr, "usage: kg_bench_build [--reps N] [--kinds cpu,cuda,nvrtc] [--headers a.h,b.h | none] [--first]\n"), 2;
  }
  // Each row starts "kind reps cold cached" (tools/bench-load-inline.py reads the first cuda row: the example).
  std::printf("%-6s %5s %12s %12s   %s\n", "kind", "reps", "cold_median", "cached_median", "source (relu.default, sandboxed, seconds)");
  for (Kind kind : kinds) {
    if (!kind_unavailable(kind).empty()) {
      std::printf("%-6s skipped: %s\n", kind_name(kind), kind_unavailable(kind).c_str());
      continue;
    }
    if (first && !first_build(kind)) return 1;
    std::vector<std::string> extra = headers;
    if (!headers_given && kind == Kind::Cpu) extra = {"torch/extension.h", "ATen/ATen.h"};
    if (!headers_given && kind == Kind::Cuda)
      extra = {"torch/extension.h", "ATen/ATen.h", "ATen/cuda/CUDAContext.h", "c10/cuda/CUDAStream.h"};
    if (kind == Kind::Nvrtc) extra.clear();
    std::vector<std::string> sources = {""};
    sources.insert(sources.end(), extra.begin(), extra.end());
    for (const auto& header : sources) {
      if (!KG_TORCH_CUDA && (header.rfind("ATen/cuda/", 0) == 0 || header.rfind("c10/cuda/", 0) == 0)) {
        std::printf("%-6s skipped: + <%s>: this libtorch has no CUDA (its CUDA headers do not build)\n", kind_name(kind), header.c_str());
        continue;
      }
      // One untimed build first: what is built once per toolchain is set-up, not a cold build.
      {
        TempDir d;
        build(make_op(d.path, "relu.default", relu_files(kind, "// warm-up " + std::to_string(rng()()) + "\n", header)), options(d.path));
      }
      // cuda, in the same reps for the ratio: the example also with nvcc run whole, a header also
      // compiled with the unit (as before the precompiled prefix took it).
      const bool compare = kind == Kind::Cuda;
      Row row, plain;
      for (int i = 0; i < reps; ++i)
        if (!measure_once(kind, header, false, row) || (compare && !measure_once(kind, header, true, plain))) return 1;
      const std::string label = header.empty() ? "example" : "+ <" + header + ">";
      print_row(kind, label, reps, row);
      if (compare) {
        print_row(kind, header.empty() ? "example, nvcc whole" : label + ", not precompiled", reps, plain);
        std::printf("cuda cold %s: %s = %.2f\n", label.c_str(), header.empty() ? "chains side by side / nvcc whole" : "precompiled / not",
                    median(row.cold) / median(plain.cold));
      }
      std::fflush(stdout);
    }
  }
  return 0;
}

// Benchmark (not a test): what kernelgate's timing costs per call on this machine.
//   round trip  - supervisor wall per untimed call through the runner (encode, memfd, socket,
//                 decode, call, encode back, decode), i.e. the price of one judged sample;
//   timed loop  - the runner's reported median for eager ops vs the same op timed in-process
//                 with a bare steady_clock loop (the loop's own overhead and the sandbox's cost).
// Usage: bench_timing_overhead [reps]   (prints a table; run it on purpose, side by side)
#include "kernelgate/loader.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double bare_loop(const char* name, const char* overload, const std::vector<c10::IValue>& inputs, int reps) {
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  c10::InferenceMode guard;
  std::vector<double> t;
  for (int i = 0; i < reps + 3; ++i) {
    std::vector<c10::IValue> args = kg::loader::clone_values(inputs);
    c10::Stack stack(args.begin(), args.end());
    auto t0 = std::chrono::steady_clock::now();
    op.callBoxed(&stack);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i >= 3) t.push_back(s);
  }
  return median(t);
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 100;
  at::set_num_threads(1);  // the runner runs with OMP_NUM_THREADS=1: compare like with like
  struct Case {
    const char* op;
    const char* name;
    const char* overload;
    std::vector<c10::IValue> inputs;
  };
  std::vector<Case> cases = {
      {"relu.default", "aten::relu", "", {at::randn({16})}},
      {"relu.default", "aten::relu", "", {at::randn({1 << 20})}},
      {"add.Tensor", "aten::add", "Tensor", {at::randn({1 << 20}), at::randn({1 << 20}), c10::IValue(1)}},
      {"mm.default", "aten::mm", "", {at::randn({256, 256}), at::randn({256, 256})}},
  };
  kg::loader::RunnerOptions ro;
  ro.runner_path = kg::loader::default_runner_path();
  auto runner = kg::loader::RunnerClient::start(ro);
  std::printf("%-14s %10s %14s %14s %14s %10s\n", "op", "numel", "round_trip_us", "runner_med_us", "inproc_med_us", "ratio");
  for (const auto& c : cases) {
    if (std::string e = runner->load("", "", c.op); !e.empty()) {
      std::fprintf(stderr, "load %s: %s\n", c.op, e.c_str());
      return 1;
    }
    std::vector<double> rt;
    for (int i = 0; i < 30; ++i) {
      auto out = runner->call(c.inputs, 1, 60);
      if (out.kind != kg::loader::CallOutcome::Kind::Ok) {
        std::fprintf(stderr, "call failed: %s\n", out.message.c_str());
        return 1;
      }
      rt.push_back(out.supervisor_wall_s);
    }
    auto timed = runner->call(c.inputs, 1, 600, 3, reps);
    double in_runner = median(timed.times_s);
    double in_proc = bare_loop(c.name, c.overload, c.inputs, reps);
    int64_t numel = c.inputs[0].toTensor().numel();
    std::printf("%-14s %10lld %14.1f %14.2f %14.2f %10.3f\n", c.op, static_cast<long long>(numel), median(rt) * 1e6, in_runner * 1e6,
                in_proc * 1e6, in_proc > 0 ? in_runner / in_proc : 0.0);
  }
  runner->finish();
  return 0;
}

// Benchmark (not a test): what kernelgate's timing costs per call on this machine.
//   round trip  - supervisor wall per untimed call through the runner (encode, memfd, socket,
//                 decode, call, encode back, decode), i.e. the price of one judged sample;
//   timed loop  - the runner's reported median for eager ops vs the same op timed in-process
//                 with a bare steady_clock loop (the loop's own overhead and the sandbox's cost),
//                 twice: without a cache flush, and with the flush the runner does by default
//                 (a write walk over max(2x LLC, 64 MiB) before every timed call, done by the
//                 bare loop too). The flushed figures include what a cold cache costs the op
//                 (instruction cache and TLB too: a few microseconds for any op); the ratio
//                 compares like with like.
// Usage: bench_timing_overhead [reps]   (prints a table; run it on purpose, side by side)
#include "kernelgate/cache_flush.h"
#include "kernelgate/loader.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void flush_walk(std::vector<uint8_t>& buf) {
  static uint8_t counter = 0;
  ++counter;
  volatile uint8_t* p = buf.data();
  for (size_t i = 0; i < buf.size(); i += 64) p[i] = static_cast<uint8_t>(p[i] + counter);
}

double bare_loop(const char* name, const char* overload, const std::vector<c10::IValue>& inputs, int reps, bool flush) {
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  c10::InferenceMode guard;
  std::vector<uint8_t> buf(flush ? kg::protocol::cpu_flush_default_bytes() : 0);
  std::vector<double> t;
  // The runner's order: fresh inputs replace the last ones, the call's outputs replace the last
  // call's right after the timed region (see one_call in kg_runner.cc).
  std::vector<c10::IValue> args, out;
  for (int i = 0; i < reps + 3; ++i) {
    args = kg::loader::clone_values(inputs);
    if (flush) flush_walk(buf);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<c10::IValue> result = [&] {
      c10::Stack stack(args.begin(), args.end());
      op.callBoxed(&stack);
      return std::vector<c10::IValue>(stack.begin(), stack.end());
    }();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out = std::move(result);
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
  std::printf("%-14s %8s %13s | %11s %11s %7s | %11s %11s %7s\n", "op", "numel", "round_trip_us", "runner_us", "bare_us", "ratio",
              "runner_fl_us", "bare_fl_us", "ratio");
  for (const auto& c : cases) {
    if (std::string e = kg::loader::load_message(runner->load("", "", c.op)); !e.empty()) {
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
    auto timed_with = [&](int64_t flush_bytes) {
      kg::loader::CallOptions o;
      o.warmup = 3;
      o.reps = reps;
      o.flush_bytes = flush_bytes;
      auto out = runner->call(c.inputs, 1, 600, o);
      return median(out.times_s);
    };
    const double runner_plain = timed_with(-1), runner_flushed = timed_with(0);
    const double bare_plain = bare_loop(c.name, c.overload, c.inputs, reps, false);
    const double bare_flushed = bare_loop(c.name, c.overload, c.inputs, reps, true);
    int64_t numel = c.inputs[0].toTensor().numel();
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    std::printf("%-14s %8lld %13.1f | %11.2f %11.2f %7.3f | %11.2f %11.2f %7.3f\n", c.op, static_cast<long long>(numel), median(rt) * 1e6,
                runner_plain * 1e6, bare_plain * 1e6, ratio(runner_plain, bare_plain), runner_flushed * 1e6, bare_flushed * 1e6,
                ratio(runner_flushed, bare_flushed));
  }
  runner->finish();
  return 0;
}

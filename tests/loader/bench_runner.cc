// kg_bench_runner: what kg-runner's timing loop costs per timed call on this machine, using the
// aten overload itself (no submission code). Not a test.
//
//   kg_bench_runner [--reps N] [--numel N] [--no-flush] [--device cpu|cuda] [--sets K] [--judged K]
// Prints the median timed call, the supervisor's wall time per call (decode of a fresh input
// copy, cache flush, timing, encode amortised) and the difference: the loop's overhead.
// --sets K rotates the warm-up and timed calls through K value sets, as competition's timing does
// (a fresh set per call while they fit its timing.rotation_mib): each set crosses to the runner
// and its outputs come back.
// --judged K instead makes K untimed calls, as a judged call is made (one call, its outputs and
// arguments back), and prints the median of each whole exchange: the call region written, the
// runner's reply awaited, the outputs decoded and the region gone (the size ladder's rung is one
// such call on 2^22 elements).
#include "bench_runner_options.h"
#include "kernelgate/loader.h"
#include "kernelgate/protocol.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace kg::loader;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int judged_calls(RunnerClient& r, int k, int64_t numel, Device device) {
  CallOptions o;
  o.device = device;
  const at::Tensor input = at::randn({numel});
  std::vector<double> whole, waited;
  for (int i = 0; i < k; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    CallOutcome out = r.call({input}, 1, 170, o);
    whole.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (out.kind != CallOutcome::Kind::Ok) return std::fprintf(stderr, "call: %s\n", out.message.c_str()), 1;
    waited.push_back(out.supervisor_wall_s);
  }
  std::printf("relu.default numel=%lld, %d untimed calls: whole exchange %.2f ms (median), of it the runner's reply awaited %.2f ms\n",
              static_cast<long long>(numel), k, median(whole) * 1e3, median(waited) * 1e3);
  r.finish();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 200;
  int64_t numel = 1 << 16;
  bool flush = true;
  Device device = Device::Cpu;
  int judged = 0;
  int sets = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--numel" && i + 1 < argc) numel = std::atoll(argv[++i]);
    else if (a == "--no-flush") flush = false;
    else if (a == "--device" && i + 1 < argc) device = std::string(argv[++i]) == "cuda" ? Device::Cuda : Device::Cpu;
    else if (a == "--judged" && i + 1 < argc) judged = std::max(1, std::atoi(argv[++i]));
    else if (a == "--sets" && i + 1 < argc) sets = std::max(1, std::atoi(argv[++i]));
    else
      return std::fprintf(stderr,
                          "usage: kg_bench_runner [--reps N] [--numel N] [--no-flush] [--device cpu|cuda] [--sets K] [--judged K]\n"),
             2;
  }
  const RunnerOptions ro = kg::loader::bench::runner_options(device);
  auto r = RunnerClient::start(ro);
  LoadRequest req;
  req.aten_op = "relu.default";
  req.device = device;
  if (std::string e = kg::loader::load_message(r->load(req)); !e.empty()) return std::fprintf(stderr, "load: %s\n", e.c_str()), 1;
  if (judged > 0) return judged_calls(*r, judged, numel, device);
  CallOptions o;
  o.warmup = 5;
  o.reps = reps;
  o.flush_bytes = flush ? 0 : -1;
  o.device = device;
  sets = std::min({sets, reps + o.warmup, static_cast<int>(kg::protocol::kMaxInputSets)});
  for (int k = 1; k < sets; ++k) o.more_inputs.push_back({at::randn({numel})});
  CallOutcome out = r->call({at::randn({numel})}, 1, 170, o);
  if (out.kind != CallOutcome::Kind::Ok) return std::fprintf(stderr, "call: %s\n", out.message.c_str()), 1;
  const double med = median(out.times_s);
  double per_call = out.supervisor_wall_s / (reps + o.warmup);
  std::printf("relu.default numel=%lld reps=%d sets=%d flush=%s timer=%s\n", static_cast<long long>(numel), reps, sets,
              flush ? "yes" : "no", out.timer.c_str());
  std::printf("median timed call %.2f us; supervisor wall per call %.2f us; loop overhead per call %.2f us\n", med * 1e6, per_call * 1e6,
              (per_call - med) * 1e6);
  r->finish();
  return 0;
}

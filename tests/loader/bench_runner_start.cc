// kg_bench_runner_start: what starting runners costs when many start at once, as a batch on one
// GPU starts them. Not a test.
//
//   kg_bench_runner_start [--device cpu|cuda] [--at-once 1,4,8,16] [--rounds 2]
// For each count K, K threads each start a runner (the sandbox, kg-runner's dynamic loading, its
// Hello), prepare it (on cuda: the CUDA context, the flush buffer, one kernel) and finish it,
// `rounds` times. Before it, K threads at once run a bare box of the same profile running
// /bin/true: the sandbox's own share. Prints each phase's mean and the runners per second.
#include "bench_runner_options.h"
#include "kernelgate/loader.h"
#include "kernelgate/sandbox.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace kg::loader;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Sums {
  std::mutex mu;
  double box = 0, start = 0, prepare = 0, finish = 0, worst_start = 0;
  int n = 0, boxes = 0, failed = 0;
};

void bare_box(const RunnerOptions& ro, Sums& s) {
  kg::sandbox::Spec bare;
  bare.profile = ro.profile;
  bare.argv = {"/bin/true"};
  bare.env = {"PATH=/usr/bin:/bin"};
  bare.limits = ro.limits;
  auto t = Clock::now();
  kg::sandbox::Record rec = kg::sandbox::run(bare);
  const double box = since(t);
  std::lock_guard<std::mutex> l(s.mu);
  if (rec.status != kg::sandbox::Status::OK) {
    std::fprintf(stderr, "bare box: %s\n", rec.message.c_str());
    ++s.failed;
    return;
  }
  s.box += box;
  ++s.boxes;
}

void runner(const RunnerOptions& ro, Device device, Sums& s) {
  auto t = Clock::now();
  std::unique_ptr<RunnerClient> r;
  try {
    r = RunnerClient::start(ro);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> l(s.mu);
    std::fprintf(stderr, "start: %s\n", e.what());
    ++s.failed;
    return;
  }
  const double start = since(t);
  t = Clock::now();
  auto err = r->prepare(device);
  const double prepare = since(t);
  t = Clock::now();
  r->finish();
  const double finish = since(t);
  std::lock_guard<std::mutex> l(s.mu);
  if (err) {
    std::fprintf(stderr, "prepare: %s\n", err->message.c_str());
    ++s.failed;
    return;
  }
  s.start += start;
  s.prepare += prepare;
  s.finish += finish;
  s.worst_start = std::max(s.worst_start, start);
  ++s.n;
}

// `k` threads at once, `rounds` times; the wall time.
template <typename F>
double at_once(int k, int rounds, F f) {
  auto t = Clock::now();
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::thread> threads;
    for (int i = 0; i < k; ++i) threads.emplace_back(f);
    for (std::thread& th : threads) th.join();
  }
  return since(t);
}

}  // namespace

int main(int argc, char** argv) {
  Device device = Device::Cpu;
  std::vector<int> counts = {1, 4, 8, 16};
  int rounds = 2;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) {
      device = std::string(argv[++i]) == "cuda" ? Device::Cuda : Device::Cpu;
    } else if (a == "--at-once" && i + 1 < argc) {
      counts.clear();
      std::stringstream ss(argv[++i]);
      for (std::string c; std::getline(ss, c, ',');) counts.push_back(std::max(1, std::atoi(c.c_str())));
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      return std::fprintf(stderr, "usage: kg_bench_runner_start [--device cpu|cuda] [--at-once 1,4,8,16] [--rounds N]\n"), 2;
    }
  }
  const RunnerOptions ro = kg::loader::bench::runner_options(device);
  std::printf("runner start-up on %s, %u cores: mean seconds per runner (bare box: the same profile running /bin/true)\n",
              device == Device::Cuda ? "cuda" : "cpu", std::thread::hardware_concurrency());
  std::printf("%8s %9s %9s %9s %9s %11s %12s\n", "at once", "bare box", "start", "prepare", "finish", "worst start", "runners/s");
  int failed = 0;
  for (int k : counts) {
    Sums s;
    at_once(k, rounds, [&] { bare_box(ro, s); });
    const double wall = at_once(k, rounds, [&] { runner(ro, device, s); });
    failed += s.failed;
    if (s.n == 0) continue;
    std::printf("%8d %9.3f %9.3f %9.3f %9.3f %11.3f %12.2f\n", k, s.boxes ? s.box / s.boxes : 0.0, s.start / s.n, s.prepare / s.n,
                s.finish / s.n, s.worst_start, s.n / wall);
  }
  if (failed) std::fprintf(stderr, "%d runner(s) failed\n", failed);
  return failed ? 1 : 0;
}

// kg_bench_cuda_call_steps: what each step kg-runner takes around one timed call on cuda:0 costs
// on this machine's GPU, host wall time per step (median over the calls). Not a test.
//
//   kg_bench_cuda_call_steps [--calls N] [--numel N]
//
// The steps are those of CallRun::timed_call and cuda_before_timed / cuda_timed
// (loader/runner/cuda_device.cc) with a device-to-device copy of `numel` floats standing in for
// the op: the persisting-L2 checks and reset, the 2 x L2 memset that flushes the cache, the fresh
// input copy, the bracketing events around the op, the waits, the event read and the two thread
// counts. A timed exchange's wall clock less its calls' times (results.json's timing_seconds) is
// made of these, the transfers of the value sets, and the supervisor's share.
#include <cuda_runtime.h>
#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

size_t thread_count() {
  DIR* d = ::opendir("/proc/self/task");
  if (!d) return 0;
  size_t n = 0;
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n;
}

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t n) { check(cudaMalloc(&p, n), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

struct Event {
  cudaEvent_t e = nullptr;
  Event() { check(cudaEventCreate(&e), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 300;
  size_t numel = 8192;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--calls")) calls = std::max(10, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--numel")) numel = std::max<size_t>(1, std::strtoull(argv[i + 1], nullptr, 10));
  }
  try {
    int l2 = 0;
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "the L2 size");
    const size_t flush_bytes = std::max<size_t>(2 * static_cast<size_t>(l2), size_t{64} << 20);  // as kg-runner
    DeviceBuffer flush(flush_bytes), source(numel * 4), input(numel * 4), output(numel * 4);
    Stream stream;
    Event start, stop;
    const char* names[] = {"persisting L2 limit read",
                           "stream access window read",
                           "cudaCtxResetPersistingL2Cache",
                           "L2 flush memset (queued)",
                           "fresh input copy (queued)",
                           "events around the op (queued)",
                           "wait for the stop event",
                           "stream query + device sync",
                           "event elapsed time",
                           "two thread counts (/proc)",
                           "the whole call"};
    constexpr int kSteps = 11;
    std::vector<std::vector<double>> t(kSteps);
    float op_ms_sum = 0;
    const int warm = 10;
    for (int c = 0; c < calls + warm; ++c) {
      const double t0 = now_s();
      double s = t0;
      auto lap = [&](int k) {
        const double x = now_s();
        if (c >= warm) t[k].push_back(x - s);
        s = x;
      };
      size_t limit = 0;
      check(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize), "cudaDeviceGetLimit");
      lap(0);
      cudaStreamAttrValue window{};
      check(cudaStreamGetAttribute(stream.s, cudaStreamAttributeAccessPolicyWindow, &window), "cudaStreamGetAttribute");
      lap(1);
      check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
      lap(2);
      check(cudaMemsetAsync(flush.p, c & 0xff, flush_bytes, stream.s), "the flush");
      lap(3);
      check(cudaMemcpyAsync(input.p, source.p, numel * 4, cudaMemcpyDeviceToDevice, stream.s), "the input copy");
      lap(4);
      check(cudaEventRecord(start.e, stream.s), "cudaEventRecord");
      check(cudaMemcpyAsync(output.p, input.p, numel * 4, cudaMemcpyDeviceToDevice, stream.s), "the op");
      check(cudaEventRecord(stop.e, stream.s), "cudaEventRecord");
      lap(5);
      check(cudaEventSynchronize(stop.e), "cudaEventSynchronize");
      lap(6);
      (void)cudaStreamQuery(stream.s);
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      lap(7);
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start.e, stop.e), "cudaEventElapsedTime");
      if (c >= warm) op_ms_sum += ms;
      lap(8);
      volatile size_t threads = thread_count() + thread_count();
      (void)threads;
      lap(9);
      if (c >= warm) t[10].push_back(now_s() - t0);
    }
    // The flush alone, on the device's clock.
    check(cudaEventRecord(start.e, stream.s), "cudaEventRecord");
    for (int k = 0; k < 20; ++k) check(cudaMemsetAsync(flush.p, k, flush_bytes, stream.s), "the flush");
    check(cudaEventRecord(stop.e, stream.s), "cudaEventRecord");
    check(cudaEventSynchronize(stop.e), "cudaEventSynchronize");
    float flush_ms = 0;
    check(cudaEventElapsedTime(&flush_ms, start.e, stop.e), "cudaEventElapsedTime");
    std::printf("L2 %d bytes, flush %zu bytes, op: a %zu-float device copy; medians over %d calls, host wall per step (us):\n", l2,
                flush_bytes, numel, calls);
    for (int k = 0; k < kSteps; ++k) std::printf("  %-32s %9.1f\n", names[k], median(t[k]) * 1e6);
    std::printf("  the op on the device's clock (mean) %9.1f\n", op_ms_sum * 1e3 / calls);
    std::printf("  one flush on the device's clock     %9.1f\n", flush_ms * 1e3 / 20);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kg_bench_cuda_call_steps: %s\n", e.what());
    return 1;
  }
}

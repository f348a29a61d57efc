// The device work watch (loader/runner/cudart, no_device_work): this test executable defines
// and exports libcudart's launch, memset and copy entry points exactly as kg-runner does, and
// loads a library linked against libcudart, as the runner loads a cuda-kind artifact. The
// library's calls must reach the watch first (ELF interposition), be counted only while armed
// and only when they are device work, and still reach libcudart. No GPU is needed: without a
// driver every call fails, after the watch has seen it. The stream order's bookkeeping is pinned
// on made-up handles (no GPU); the ordering watch's verdicts on real streams need one.
#include "cudart/device_work.h"
#include "cudart/stream_order.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>
#include <gtest/gtest.h>

#include <csignal>
#include <thread>
#include <vector>

namespace dw = kg::runner::device_work;

namespace {

// The library, loaded once and never closed, as kg-runner keeps a loaded artifact: libcudart
// keeps state about what a library's calls named (launched functions, a kernel library it
// loaded), which must not outlive the library's own code.
struct Caller {
  void* handle = nullptr;
  int (*device_work)() = nullptr;
  int (*host_work)() = nullptr;
  static const Caller& get() {
    static const Caller c;
    return c;
  }

 private:
  Caller() {
    handle = dlopen(KG_DEVICE_WORK_CALLER, RTLD_NOW | RTLD_LOCAL);
    if (!handle) return;
    device_work = reinterpret_cast<int (*)()>(dlsym(handle, "kg_test_queue_device_work"));
    host_work = reinterpret_cast<int (*)()>(dlsym(handle, "kg_test_queue_host_work"));
  }
};

// A crash names where it happened (a GPU run's log has nothing else to go on).
void print_backtrace(int sig) {
  void* frames[64];
  const int n = backtrace(frames, 64);
  const char msg[] = "device_work_test: fatal signal, backtrace:\n";
  [[maybe_unused]] ssize_t w = write(2, msg, sizeof msg - 1);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}
[[maybe_unused]] const bool g_backtrace_on_crash = [] {
  signal(SIGSEGV, print_backtrace);
  signal(SIGBUS, print_backtrace);
  signal(SIGABRT, print_backtrace);
  return true;
}();

TEST(DeviceWork, ResolvesLibcudartsEntryPoints) {
  // The executable links libcudart (as kg-runner does); a name it lacks would fail here.
  EXPECT_TRUE(dw::install()) << "libcudart " << cudaGetErrorName(cudaSuccess);
}

TEST(DeviceWork, CountsLaunchesMemsetsAndDeviceCopiesOfALoadedLibrary) {
  ASSERT_TRUE(dw::install());
  const Caller& c = Caller::get();
  ASSERT_NE(c.handle, nullptr) << dlerror();
  ASSERT_NE(c.device_work, nullptr);
  dw::arm();
  const int missed = c.device_work();
  EXPECT_EQ(dw::disarm(), 5u) << "every launch, memset and device-to-device copy is device work";
  EXPECT_EQ(missed, 0) << "the watch must forward every call to libcudart";
}

TEST(DeviceWork, HostCopiesAndHostFunctionsAreNotDeviceWork) {
  ASSERT_TRUE(dw::install());
  const Caller& c = Caller::get();
  ASSERT_NE(c.host_work, nullptr) << dlerror();
  dw::arm();
  const int missed = c.host_work();
  EXPECT_EQ(dw::disarm(), 0u);
  EXPECT_EQ(missed, 0);
}

TEST(DeviceWork, CountsOnlyWhileArmedAndFromAnyThread) {
  ASSERT_TRUE(dw::install());
  const Caller& c = Caller::get();
  ASSERT_NE(c.device_work, nullptr) << dlerror();
  c.device_work();
  dw::arm();
  EXPECT_EQ(dw::disarm(), 0u) << "work queued before arming is not counted";
  dw::arm();
  std::thread([&] { c.device_work(); }).join();
  EXPECT_EQ(dw::disarm(), 5u) << "work queued by another thread of the process counts";
  c.device_work();
  dw::arm();
  EXPECT_EQ(dw::disarm(), 0u) << "arming starts from zero";
}

// ---- the stream order (stream_order.h), on made-up handles --------------------------------

CUstream_st* fake_stream(uintptr_t n) { return reinterpret_cast<CUstream_st*>(0x1000 + 0x10 * n); }
CUevent_st* fake_event(uintptr_t n) { return reinterpret_cast<CUevent_st*>(0x8000 + 0x10 * n); }
CUstream_st* const kLegacy = cudaStreamLegacy;
CUstream_st* const kPerThread = cudaStreamPerThread;
CUstream_st* const kNonBlocking = fake_stream(1);
CUstream_st* const kOtherNonBlocking = fake_stream(2);
CUstream_st* const kBlocking = fake_stream(3);
CUstream_st* const kThirdNonBlocking = fake_stream(4);
bool fake_blocking(CUstream_st* s) { return s == kBlocking || s == kLegacy || s == kPerThread; }

dw::StreamOrder order_on(CUstream_st* caller) {
  dw::StreamOrder o(fake_blocking);
  o.begin(caller);
  return o;
}

TEST(StreamOrder, TheCallersStreamAndWhatTheLegacyStreamOrdersAreOrdered) {
  dw::StreamOrder o = order_on(kLegacy);
  EXPECT_TRUE(o.queued(kLegacy));
  EXPECT_TRUE(o.queued(kPerThread)) << "the per-thread default stream waits for the legacy stream";
  EXPECT_TRUE(o.queued(kBlocking)) << "a stream made by cudaStreamCreate waits for the legacy stream";
  EXPECT_FALSE(o.queued(kNonBlocking)) << "a non-blocking stream waits for nothing";
  dw::StreamOrder side = order_on(kNonBlocking);
  EXPECT_TRUE(side.queued(kNonBlocking));
  EXPECT_FALSE(side.queued(kLegacy)) << "the legacy stream waits only for blocking streams";
  EXPECT_FALSE(side.queued(kBlocking));
  dw::StreamOrder blocking = order_on(kBlocking);
  EXPECT_TRUE(blocking.queued(kLegacy)) << "the legacy stream waits for every blocking stream";
  EXPECT_FALSE(blocking.queued(kPerThread));
}

TEST(StreamOrder, AWaitForAnEventOfAnOrderedStreamOrdersTransitively) {
  dw::StreamOrder o = order_on(kLegacy);
  o.recorded(fake_event(1), kLegacy);
  o.waited(kNonBlocking, fake_event(1));
  EXPECT_TRUE(o.queued(kNonBlocking));
  o.recorded(fake_event(2), kNonBlocking);
  o.waited(kOtherNonBlocking, fake_event(2));
  EXPECT_TRUE(o.queued(kOtherNonBlocking)) << "ordered through a stream that was ordered";
  o.recorded(fake_event(3), kBlocking);  // a blocking stream's event waits for the legacy stream too
  o.waited(kThirdNonBlocking, fake_event(3));
  EXPECT_TRUE(o.queued(kThirdNonBlocking));
}

TEST(StreamOrder, EventsOfUnorderedStreamsOrEarlierCallsDoNotOrder) {
  dw::StreamOrder o = order_on(kLegacy);
  o.waited(kNonBlocking, fake_event(1));  // recorded before the call (or never)
  EXPECT_FALSE(o.queued(kNonBlocking));
  o.recorded(fake_event(2), kOtherNonBlocking);
  o.waited(kNonBlocking, fake_event(2));
  EXPECT_FALSE(o.queued(kNonBlocking)) << "recorded on a stream that is not ordered";
  o.recorded(fake_event(3), kLegacy);
  o.recorded(fake_event(3), kOtherNonBlocking);  // recorded again where nothing is ordered
  o.waited(kNonBlocking, fake_event(3));
  EXPECT_FALSE(o.queued(kNonBlocking)) << "an event recorded again on an unordered stream stops counting";
  o.recorded(fake_event(4), kLegacy);
  o.begin(kLegacy);  // the next call
  o.waited(kNonBlocking, fake_event(4));
  EXPECT_FALSE(o.queued(kNonBlocking)) << "an event of the previous call";
}

TEST(StreamOrder, AHostWaitForTheCallersStreamOrdersEveryStream) {
  auto after = [](auto host_wait) {
    dw::StreamOrder o = order_on(kLegacy);
    host_wait(o);
    return o.queued(kNonBlocking);
  };
  EXPECT_TRUE(after([](dw::StreamOrder& o) { o.stream_completed(kLegacy); }));
  EXPECT_TRUE(after([](dw::StreamOrder& o) { o.device_synchronised(); }));
  EXPECT_TRUE(after([](dw::StreamOrder& o) {
    o.recorded(fake_event(1), kLegacy);
    o.event_completed(fake_event(1));
  }));
  EXPECT_TRUE(after([](dw::StreamOrder& o) {
    o.recorded(fake_event(1), kLegacy);
    o.waited(kOtherNonBlocking, fake_event(1));
    o.stream_completed(kOtherNonBlocking);
  })) << "a stream that waited for the caller's stream, synchronised";
  EXPECT_TRUE(after([](dw::StreamOrder& o) {
    o.queued(kBlocking);
    o.stream_completed(kBlocking);
  })) << "a blocking stream with work queued after the legacy stream's";
  EXPECT_FALSE(after([](dw::StreamOrder& o) { o.stream_completed(kOtherNonBlocking); }));
  EXPECT_FALSE(after([](dw::StreamOrder& o) { o.stream_completed(kBlocking); })) << "an empty blocking stream completes at once";
  EXPECT_FALSE(after([](dw::StreamOrder& o) {
    o.recorded(fake_event(1), kOtherNonBlocking);
    o.event_completed(fake_event(1));
  }));
  EXPECT_FALSE(after([](dw::StreamOrder& o) { o.event_completed(fake_event(9)); })) << "an event not recorded during the call";
}

bool have_device() {
  int n = 0;
  const bool yes = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  cudaGetLastError();
  return yes;
}

// The timed calls' bracketing, on a GPU (tools/gpu-check runs it): memsets stand in for kernels
// (this executable's own calls reach its definitions, as the artifact's reach kg-runner's), the
// legacy default stream for the runner's timed stream.
class DeviceWorkGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_device()) GTEST_SKIP() << "needs a GPU (tools/gpu-check)";
    ASSERT_TRUE(dw::install());
    ASSERT_TRUE(dw::create_bracket_events());
    ASSERT_EQ(cudaMalloc(&big_, kBig), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&small_, 4096), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&side2_, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&blocking_), cudaSuccess);
    for (cudaEvent_t* e : {&start_, &stop_, &ready_, &done_}) ASSERT_EQ(cudaEventCreate(e), cudaSuccess);
  }
  void TearDown() override {
    cudaDeviceSynchronize();
    for (cudaEvent_t e : {start_, stop_, ready_, done_})
      if (e) cudaEventDestroy(e);
    for (cudaStream_t st : {side_, side2_, blocking_})
      if (st) cudaStreamDestroy(st);
    if (big_) cudaFree(big_);
    if (small_) cudaFree(small_);
  }
  // Runs `call` as a timed call on the legacy stream; how far its bracketed work ran outside.
  template <typename F>
  double timed(F call) {
    EXPECT_EQ(cudaEventRecord(start_, nullptr), cudaSuccess);
    dw::arm_timed(nullptr);
    call();
    dw::disarm_timed();
    EXPECT_EQ(cudaEventRecord(stop_, nullptr), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return dw::outside_timed_region(start_, stop_);
  }
  // Runs `call` as an untimed call on the legacy stream (the ordering watch armed); whether it
  // queued work on a stream not ordered after the legacy stream. The watch leaves no error.
  template <typename F>
  bool unordered(F call) {
    dw::arm_timed(nullptr);
    call();
    dw::disarm_timed();
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    return dw::queued_unordered_work();
  }
  static constexpr size_t kBig = size_t(1) << 30;  // a memset of about 0.3 ms on an H200
  void* big_ = nullptr;
  void* small_ = nullptr;
  cudaStream_t side_ = nullptr, side2_ = nullptr;  // non-blocking
  cudaStream_t blocking_ = nullptr;                // cudaStreamCreate: ordered after the legacy stream
  cudaEvent_t start_ = nullptr, stop_ = nullptr, ready_ = nullptr, done_ = nullptr;
};

TEST_F(DeviceWorkGpu, WorkLeftRunningOnASideStreamEndsAfterTheStop) {
  const double outside = timed([&] { cudaMemsetAsync(big_, 1, kBig, side_); });
  EXPECT_GT(outside, 50e-6) << "an unjoined 1 GiB memset ends long after the stop event";
}

TEST_F(DeviceWorkGpu, SideStreamWorkBesideTheRunnersPreparationBeginsBeforeTheStart) {
  cudaMemsetAsync(big_, 2, kBig, nullptr);  // the runner's input copies and flush, not armed
  const double outside = timed([&] {
    cudaMemsetAsync(small_, 3, 4096, side_);
    cudaEventRecord(done_, side_);
    cudaStreamWaitEvent(nullptr, done_, 0);  // joined at the end, but never waited for the start
  });
  EXPECT_GT(outside, 50e-6) << "the side memset ran while the timed stream was still busy before the start event";
}

TEST_F(DeviceWorkGpu, JoinedSideStreamWorkAndTimedStreamWorkLieInside) {
  cudaMemsetAsync(big_, 4, kBig, nullptr);
  const double joined = timed([&] {
    cudaEventRecord(ready_, nullptr);
    cudaStreamWaitEvent(side_, ready_, 0);
    cudaMemsetAsync(big_, 5, kBig, side_);
    cudaEventRecord(done_, side_);
    cudaStreamWaitEvent(nullptr, done_, 0);
  });
  EXPECT_LT(joined, 4e-6);
  const double same = timed([&] { cudaMemsetAsync(big_, 6, kBig, nullptr); });
  EXPECT_EQ(same, 0.0) << "work on the timed stream is not bracketed";
}

// ---- the ordering watch: every case on real streams, memsets standing in for kernels ---------

TEST_F(DeviceWorkGpu, WorkOnTheCallersStreamAndTheStreamsOrderedWithItIsOrdered) {
  EXPECT_FALSE(unordered([&] {
    cudaMemsetAsync(small_, 1, 4096, nullptr);
    cudaMemsetAsync(small_, 1, 4096, cudaStreamLegacy);
    cudaMemsetAsync(small_, 1, 4096, cudaStreamPerThread);
    cudaMemset(small_, 1, 4096);
  }));
  EXPECT_FALSE(unordered([&] { cudaMemsetAsync(small_, 2, 4096, blocking_); })) << "a blocking stream waits for the legacy stream";
}

TEST_F(DeviceWorkGpu, ASideStreamOrderedBothWaysIsOrdered) {
  EXPECT_FALSE(unordered([&] {
    cudaEventRecord(ready_, nullptr);
    cudaStreamWaitEvent(side_, ready_, 0);
    cudaMemsetAsync(big_, 3, kBig, side_);
    cudaEventRecord(done_, side_);
    cudaStreamWaitEvent(nullptr, done_, 0);
  }));
  EXPECT_FALSE(unordered([&] {
    cudaEventRecordWithFlags(ready_, nullptr, cudaEventRecordDefault);
    cudaStreamWaitEvent(side_, ready_, 0);
    cudaEventRecord(done_, side_);
    cudaStreamWaitEvent(side2_, done_, 0);  // ordered through side_
    cudaMemsetAsync(small_, 4, 4096, side2_);
  })) << "transitively";
}

TEST_F(DeviceWorkGpu, ASideStreamJoinedOnlyAtTheEndIsNotOrdered) {
  EXPECT_TRUE(unordered([&] { cudaMemsetAsync(small_, 5, 4096, side_); }));
  EXPECT_TRUE(unordered([&] {
    cudaMemsetAsync(small_, 6, 4096, side_);
    cudaEventRecord(done_, side_);
    cudaStreamWaitEvent(nullptr, done_, 0);
  })) << "the forward-race pattern: joined back, never waited for the caller's stream";
  EXPECT_FALSE(unordered([] {})) << "each call starts afresh";
}

TEST_F(DeviceWorkGpu, EventsFromBeforeTheCallOrOfUnorderedStreamsDoNotOrder) {
  cudaEventRecord(ready_, nullptr);  // before the call
  EXPECT_TRUE(unordered([&] {
    cudaStreamWaitEvent(side_, ready_, 0);
    cudaMemsetAsync(small_, 7, 4096, side_);
  }));
  EXPECT_TRUE(unordered([&] {
    cudaEventRecord(ready_, nullptr);
    cudaEventRecord(ready_, side2_);  // recorded again where nothing waited for the caller's stream
    cudaStreamWaitEvent(side_, ready_, 0);
    cudaMemsetAsync(small_, 8, 4096, side_);
  }));
}

TEST_F(DeviceWorkGpu, AHostWaitForTheCallersStreamOrdersEveryStream) {
  EXPECT_FALSE(unordered([&] {
    cudaStreamSynchronize(nullptr);
    cudaMemsetAsync(small_, 9, 4096, side_);
  }));
  EXPECT_FALSE(unordered([&] {
    cudaDeviceSynchronize();
    cudaMemsetAsync(small_, 10, 4096, side_);
  }));
  EXPECT_FALSE(unordered([&] {
    cudaEventRecord(ready_, nullptr);
    cudaEventSynchronize(ready_);
    cudaMemsetAsync(small_, 11, 4096, side_);
  }));
  EXPECT_FALSE(unordered([&] {
    cudaEventRecord(ready_, nullptr);
    while (cudaEventQuery(ready_) == cudaErrorNotReady) {}
    cudaMemsetAsync(small_, 12, 4096, side_);
  }));
  EXPECT_FALSE(unordered([&] {
    int host = 0;
    cudaMemcpy(&host, small_, sizeof host, cudaMemcpyDeviceToHost);  // returns once the copy is done
    cudaMemsetAsync(small_, 12, 4096, side_);
  }));
  EXPECT_TRUE(unordered([&] {
    cudaMemcpy(big_, small_, 4096, cudaMemcpyDeviceToDevice);  // no host wait
    cudaMemsetAsync(small_, 12, 4096, side_);
  }));
  EXPECT_TRUE(unordered([&] {
    cudaEventRecord(done_, side2_);
    cudaEventSynchronize(done_);  // an event of a stream that never waited for the caller's
    cudaMemsetAsync(small_, 13, 4096, side_);
  }));
}

TEST_F(DeviceWorkGpu, WorkFromAnotherThreadIsChecked) {
  EXPECT_TRUE(unordered([&] { std::thread([&] { cudaMemsetAsync(small_, 14, 4096, side_); }).join(); }));
}

TEST_F(DeviceWorkGpu, WorkCapturedIntoAGraphIsCheckedWhereTheGraphLaunches) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  EXPECT_FALSE(unordered([&] {
    ASSERT_EQ(cudaStreamBeginCapture(side_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    cudaMemsetAsync(small_, 15, 4096, side_);
    ASSERT_EQ(cudaStreamEndCapture(side_, &graph), cudaSuccess);
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    cudaGraphLaunch(exec, nullptr);
  }));
  EXPECT_TRUE(unordered([&] { cudaGraphLaunch(exec, side_); }));
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
}

TEST_F(DeviceWorkGpu, TheOrderingWatchKeepsTheCallersPendingError) {
  ASSERT_NE(cudaStreamWaitEvent(side_, nullptr, 0), cudaSuccess);  // the caller's error, pending
  dw::arm_timed(nullptr);
  cudaMemsetAsync(small_, 16, 4096, side_);  // unordered: the watch asks the runtime about side_
  dw::disarm_timed();
  EXPECT_TRUE(dw::queued_unordered_work());
  EXPECT_NE(cudaGetLastError(), cudaSuccess) << "the caller's error is still there";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace

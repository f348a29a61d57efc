// The device work watch (loader/runner/cudart, no_device_work): this test executable defines
// and exports libcudart's launch, memset and copy entry points exactly as kg-runner does, and
// loads a library linked against libcudart, as the runner loads a cuda-kind artifact. The
// library's calls must reach the watch first (ELF interposition), be counted only while armed
// and only when they are device work, and still reach libcudart. No GPU is needed: without a
// driver every call fails, after the watch has seen it.
#include "cudart/device_work.h"

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
    for (cudaEvent_t* e : {&start_, &stop_, &ready_, &done_}) ASSERT_EQ(cudaEventCreate(e), cudaSuccess);
  }
  void TearDown() override {
    cudaDeviceSynchronize();
    for (cudaEvent_t e : {start_, stop_, ready_, done_})
      if (e) cudaEventDestroy(e);
    if (side_) cudaStreamDestroy(side_);
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
  static constexpr size_t kBig = size_t(1) << 30;  // a memset of about 0.3 ms on an H200
  void* big_ = nullptr;
  void* small_ = nullptr;
  cudaStream_t side_ = nullptr;
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

}  // namespace

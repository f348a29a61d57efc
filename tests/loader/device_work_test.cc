// The device work watch (loader/runner/cudart, no_device_work): this test executable defines
// and exports libcudart's launch, memset and copy entry points exactly as kg-runner does, and
// loads a library linked against libcudart, as the runner loads a cuda-kind artifact. The
// library's calls must reach the watch first (ELF interposition), be counted only while armed
// and only when they are device work, and still reach libcudart. No GPU is needed: without a
// driver every call fails, after the watch has seen it.
#include "cudart/device_work.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <thread>

namespace dw = kg::runner::device_work;

namespace {

struct Caller {
  void* handle = nullptr;
  int (*device_work)() = nullptr;
  int (*host_work)() = nullptr;
  Caller() {
    handle = dlopen(KG_DEVICE_WORK_CALLER, RTLD_NOW | RTLD_LOCAL);
    if (!handle) return;
    device_work = reinterpret_cast<int (*)()>(dlsym(handle, "kg_test_queue_device_work"));
    host_work = reinterpret_cast<int (*)()>(dlsym(handle, "kg_test_queue_host_work"));
  }
  ~Caller() {
    if (handle) dlclose(handle);
  }
};

TEST(DeviceWork, ResolvesLibcudartsEntryPoints) {
  // The executable links libcudart (as kg-runner does); a name it lacks would fail here.
  EXPECT_TRUE(dw::install()) << "libcudart " << cudaGetErrorName(cudaSuccess);
}

TEST(DeviceWork, CountsLaunchesMemsetsAndDeviceCopiesOfALoadedLibrary) {
  ASSERT_TRUE(dw::install());
  Caller c;
  ASSERT_NE(c.handle, nullptr) << dlerror();
  ASSERT_NE(c.device_work, nullptr);
  dw::arm();
  const int missed = c.device_work();
  EXPECT_EQ(dw::disarm(), 5u) << "every launch, memset and device-to-device copy is device work";
  EXPECT_EQ(missed, 0) << "the watch must forward every call to libcudart";
}

TEST(DeviceWork, HostCopiesAndHostFunctionsAreNotDeviceWork) {
  ASSERT_TRUE(dw::install());
  Caller c;
  ASSERT_NE(c.host_work, nullptr) << dlerror();
  dw::arm();
  const int missed = c.host_work();
  EXPECT_EQ(dw::disarm(), 0u);
  EXPECT_EQ(missed, 0);
}

TEST(DeviceWork, CountsOnlyWhileArmedAndFromAnyThread) {
  ASSERT_TRUE(dw::install());
  Caller c;
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

}  // namespace

// DeviceLock: judging shares a device, timing has it alone, and a waiting timer goes before
// judging that arrives after it.
#include "kernelgate/harness.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <thread>

using kg::harness::DeviceLock;
using namespace std::chrono_literals;

TEST(DeviceLock, JudgingSharesTheDevice) {
  DeviceLock lock;
  std::shared_lock<DeviceLock> a(lock);
  std::atomic<bool> second{false};
  std::thread t([&] {
    std::shared_lock<DeviceLock> b(lock);
    second = true;
  });
  t.join();  // would hang if judging did not share
  EXPECT_TRUE(second);
}

TEST(DeviceLock, TimingWaitsForJudgingAndLaterJudgingWaitsForTiming) {
  DeviceLock lock;
  std::atomic<int> step{0};
  std::atomic<int> timer_at{-1}, late_judge_at{-1};
  auto early = std::make_unique<std::shared_lock<DeviceLock>>(lock);
  std::thread timer([&] {
    std::unique_lock<DeviceLock> alone(lock);
    timer_at = step++;
    std::this_thread::sleep_for(200ms);
  });
  std::this_thread::sleep_for(200ms);  // the timer is waiting for the early judging
  EXPECT_EQ(timer_at.load(), -1);
  std::thread late([&] {
    std::shared_lock<DeviceLock> judge(lock);
    late_judge_at = step++;
  });
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(late_judge_at.load(), -1) << "judging that came after a waiting timer must wait for it";
  early.reset();
  timer.join();
  late.join();
  EXPECT_EQ(timer_at.load(), 0);
  EXPECT_EQ(late_judge_at.load(), 1);
}

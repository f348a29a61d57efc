// The timed calls' stop on precision (kernelgate/timing_stop.h): the median's distribution-free
// interval, and the decision kg-runner makes and the supervisor checks with it.
#include "kernelgate/timing_stop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {

namespace protocol = kg::protocol;

TEST(TimingStop, SmallCountsTakeTheWholeRange) {
  const std::vector<double> t = protocol::sorted_times(std::vector<double>{5, 1, 3, 2, 4}.data(), 5);
  const protocol::MedianInterval m = protocol::median_interval(t.data(), t.size());
  EXPECT_EQ(m.median, 3);
  EXPECT_EQ(m.low, 1);
  EXPECT_EQ(m.high, 5);
  const std::vector<double> even = protocol::sorted_times(std::vector<double>{4, 1, 3, 2}.data(), 4);
  EXPECT_EQ(protocol::median_interval(even.data(), even.size()).median, 2.5);
}

TEST(TimingStop, TheIntervalNarrowsToTheMiddleRanksAsCallsAddUp) {
  std::vector<double> t;
  for (int i = 1; i <= 100; ++i) t.push_back(i);
  const protocol::MedianInterval m = protocol::median_interval(t.data(), t.size());
  // Ranks floor(50 - 9.8) = 40 and ceil(51 + 9.8) = 61.
  EXPECT_EQ(m.low, 40);
  EXPECT_EQ(m.high, 61);
  EXPECT_EQ(m.median, 50.5);
}

TEST(TimingStop, OneOutlierMovesTheIntervalByOneRankAtMost) {
  std::vector<double> t(40, 1.0);
  for (size_t i = 0; i < t.size(); ++i) t[i] += 0.001 * static_cast<double>(i % 5);
  const double before = protocol::median_rel_error(protocol::sorted_times(t.data(), t.size()).data(), t.size());
  t[7] = 1000;  // a preempted call
  EXPECT_LT(protocol::median_rel_error(protocol::sorted_times(t.data(), t.size()).data(), t.size()), 0.01);
  EXPECT_LE(before, 0.01);
}

TEST(TimingStop, StopsOnlyAfterMinRepsAndWithinTheAskedPrecision) {
  const std::vector<double> steady(20, 2e-6);
  EXPECT_TRUE(protocol::timed_calls_may_stop(steady.data(), 10, 10, 0.01));
  EXPECT_FALSE(protocol::timed_calls_may_stop(steady.data(), 9, 10, 0.01));
  EXPECT_FALSE(protocol::timed_calls_may_stop(steady.data(), 20, 10, 0));  // off
  const std::vector<double> zero(20, 0.0);
  EXPECT_FALSE(protocol::timed_calls_may_stop(zero.data(), 20, 1, 0.01));  // no positive median
  const std::vector<double> spread = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_FALSE(protocol::timed_calls_may_stop(spread.data(), spread.size(), 1, 0.01));
  EXPECT_TRUE(protocol::timed_calls_may_stop(spread.data(), spread.size(), 1, 0.9));
}

// With normal noise of 3% the interval's half-width is about 1.96 * 1.2533 * 3% / sqrt(n), so a
// 1% stop comes after roughly 50-60 calls, and the median it stops at is within 1% of the
// distribution's in about 95% of runs.
TEST(TimingStop, ANoisyTimingStopsWhereTheNormalApproximationSays) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(1.0, 0.03);
  int within = 0, runs = 400;
  std::vector<int> stops;
  for (int run = 0; run < runs; ++run) {
    std::vector<double> t;
    while (t.size() < 1000) {
      const double x = noise(rng);
      t.insert(std::upper_bound(t.begin(), t.end(), x), x);  // kept in order, as kg-runner keeps them
      if (protocol::timed_calls_may_stop(t.data(), t.size(), 10, 0.01)) break;
    }
    stops.push_back(static_cast<int>(t.size()));
    if (std::abs(protocol::median_interval(t.data(), t.size()).median - 1.0) <= 0.01) ++within;
  }
  std::sort(stops.begin(), stops.end());
  EXPECT_GT(stops[stops.size() / 2], 30);
  EXPECT_LT(stops[stops.size() / 2], 100);
  EXPECT_GE(within, runs * 90 / 100);
}

}  // namespace

// The classifiers behind the trial-based rules, on tensors alone.
#include "../../harness/src/cheats.h"
#include "kernelgate/loader.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

using kg::harness::same_bytes_fraction;
using kg::harness::stale_fraction;
using kg::harness::trivial_output_evidence;

TEST(VerdictCheats, ConstantOutputIsTrivialWhenTheReferenceIsNot) {
  at::Tensor x = at::randn({16});
  auto ev = trivial_output_evidence({x}, {x.clamp_min(0)}, {at::zeros({16})});
  ASSERT_TRUE(ev);
  EXPECT_NE(ev->find("constant"), std::string::npos);
  // A constant reference (relu of all-negative input) makes a constant answer honest.
  at::Tensor neg = -x.abs() - 1;
  EXPECT_FALSE(trivial_output_evidence({neg}, {neg.clamp_min(0)}, {at::ones({16})}));
}

TEST(VerdictCheats, ReturningTheInputIsTrivial) {
  at::Tensor x = at::randn({4, 4});
  auto ev = trivial_output_evidence({x}, {x.clamp_min(0)}, {x.clone()});
  ASSERT_TRUE(ev);
  EXPECT_NE(ev->find("input 0"), std::string::npos);
  // Unless the reference is the input too.
  at::Tensor pos = x.abs();
  EXPECT_FALSE(trivial_output_evidence({pos}, {pos.clamp_min(0)}, {pos.clone()}));
}

TEST(VerdictCheats, SameBytesFraction) {
  at::Tensor a = at::arange(10, at::kFloat);
  at::Tensor b = a.clone();
  EXPECT_DOUBLE_EQ(same_bytes_fraction({a}, {b}), 1.0);
  b[3] = -1;
  EXPECT_DOUBLE_EQ(same_bytes_fraction({a}, {b}), 0.9);
  EXPECT_DOUBLE_EQ(same_bytes_fraction({a}, {at::arange(11, at::kFloat)}), -1);
  EXPECT_DOUBLE_EQ(same_bytes_fraction({a}, {a.to(at::kDouble)}), -1);
}

TEST(VerdictCheats, StaleElementsAreThoseLeftFromAnEarlierOutput) {
  at::Tensor earlier = at::full({8}, 5.0);
  at::Tensor ref = at::arange(8, at::kFloat);
  at::Tensor cand = ref.clone();
  cand.slice(0, 4, 8).fill_(5.0);  // the second half never written: still the earlier output
  EXPECT_DOUBLE_EQ(stale_fraction({cand}, {ref}, {earlier}), 1.0);
  at::Tensor noisy = ref.clone();
  noisy[7] = 99;  // wrong, but not stale
  EXPECT_DOUBLE_EQ(stale_fraction({noisy}, {ref}, {earlier}), 0.0);
  EXPECT_DOUBLE_EQ(stale_fraction({ref}, {ref}, {earlier}), -1) << "nothing wrong: no fraction";
}

TEST(VerdictCheats, PoisonFractionCountsWrongElementsHoldingTheRunnersJunk) {
  at::Tensor ref = at::arange(8, at::kFloat);
  at::Tensor cand = ref.clone();
  // 0x7fedbeef, c10's junk-fill word: a NaN as float.
  cand.view(at::kInt).slice(0, 4, 8).fill_(0x7fedbeef);
  EXPECT_DOUBLE_EQ(kg::harness::poison_fraction({cand}, {ref}), 1.0);
  cand[7] = 100;
  EXPECT_DOUBLE_EQ(kg::harness::poison_fraction({cand}, {ref}), 0.75);
  EXPECT_DOUBLE_EQ(kg::harness::poison_fraction({ref}, {ref}), -1);  // nothing wrong
  // Halves see the pattern at either phase: 0xbeef, 0x7fed.
  at::Tensor h = at::zeros({4}, at::kHalf);
  at::Tensor junk = at::empty({4}, at::kHalf);
  junk.view(at::kInt).fill_(0x7fedbeef);
  EXPECT_DOUBLE_EQ(kg::harness::poison_fraction({junk}, {h}), 1.0);
}

TEST(VerdictCheats, OnlyViewOpsMayReturnElementsWithoutDeviceWork) {
  using kg::harness::returns_only_views;
  auto schema = [](const char* op) { return kg::loader::aten_schema(op); };
  for (const char* view : {"t.default", "transpose.int", "split.Tensor", "view.default", "alias.default"})
    EXPECT_TRUE(returns_only_views(schema(view))) << view;
  // Computed results, in-place and out= results (written aliases), and ops with no return.
  for (const char* op : {"relu.default", "relu_.default", "add.out", "clone.default", "_softmax.default", "_foreach_add_.Scalar"})
    EXPECT_FALSE(returns_only_views(schema(op))) << op;
}

TEST(VerdictCheats, WorkLeftRunningAfterTheEndEventIsEscapedWork) {
  using kg::harness::escaped_work_evidence;
  // A 100 us kernel on a side stream: the timed stream's events see 4 us, the device stays busy.
  const std::vector<double> times(10, 4e-6), eager_idle(10, 5e-6);
  std::vector<double> cand_idle(10, 95e-6);
  cand_idle[3] = 1e-3;  // one host hiccup does not move the median
  auto ev = escaped_work_evidence(cand_idle, eager_idle, times);
  ASSERT_TRUE(ev);
  EXPECT_NE(ev->find("95"), std::string::npos) << *ev;
  // An honest kernel: its waits are eager's, give or take noise, even with hiccups.
  std::vector<double> honest(10, 7e-6);
  honest[0] = honest[1] = 2e-3;
  EXPECT_FALSE(escaped_work_evidence(honest, eager_idle, std::vector<double>(10, 130e-6)));
  // A long honest call may wait a little longer than eager without crossing half its own time.
  EXPECT_FALSE(escaped_work_evidence(std::vector<double>(10, 60e-6), eager_idle, std::vector<double>(10, 200e-6)));
  // No waits reported (the CPU) or too few calls: nothing to say.
  EXPECT_FALSE(escaped_work_evidence({}, {}, times));
  EXPECT_FALSE(escaped_work_evidence({1e-3, 1e-3}, {0, 0}, {1e-6, 1e-6}));
}

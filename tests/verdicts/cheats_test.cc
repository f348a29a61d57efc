// The classifiers behind the trial-based rules, on tensors alone.
#include "../../harness/src/cheats.h"
#include "kernelgate/loader.h"
#include "kernelgate/trace.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

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

// ---- replay evidence ---------------------------------------------------------------------------

TEST(VerdictCheats, ValueFingerprintNamesValuesNotLayoutOrArguments) {
  using kg::harness::value_fingerprint;
  at::Tensor x = at::randn({6, 5});
  EXPECT_EQ(value_fingerprint({x}), value_fingerprint({x.clone()}));
  EXPECT_EQ(value_fingerprint({x}), value_fingerprint({x.t().contiguous().t()})) << "layout is not a value";
  // Samples that differ only in a dtype= argument (or another non-tensor argument) share values.
  EXPECT_EQ(value_fingerprint({x, c10::IValue(at::kDouble)}), value_fingerprint({x, c10::IValue()}));
  at::Tensor y = x.clone();
  y[5][4] = y[5][4].item<float>() + 1;
  EXPECT_NE(value_fingerprint({x}), value_fingerprint({y}));
  EXPECT_NE(value_fingerprint({x}), value_fingerprint({x.to(at::kDouble)}));
  EXPECT_NE(value_fingerprint({x}), value_fingerprint({x.reshape({5, 6})}));
  EXPECT_EQ(value_fingerprint({at::zeros({0, 4})}), value_fingerprint({at::zeros({0, 4})}));
}

TEST(VerdictCheats, ReplayIsAnEarlierOutputThatIsNotThisCallsAnswer) {
  using kg::harness::replays_earlier_output;
  at::Tensor earlier = at::randn({8});
  at::Tensor ref = at::randn({8});
  EXPECT_TRUE(replays_earlier_output({earlier.clone()}, {ref}, {earlier}));
  EXPECT_FALSE(replays_earlier_output({ref.clone()}, {ref}, {earlier})) << "its own answer";
  // The right values in the wrong dtype (dtype= ignored): a dtype mistake, not a replay. The
  // earlier call was on other values yet had the same answer (a constant, ones_like, a sum of
  // an empty tensor).
  at::Tensor ones = at::ones({8});
  EXPECT_FALSE(replays_earlier_output({ones.clone()}, {at::ones({8}, at::kDouble)}, {ones}));
  at::Tensor zero = at::zeros({});
  EXPECT_FALSE(replays_earlier_output({zero.clone()}, {at::zeros({}, at::kDouble)}, {zero}));
  // In another dtype and other values too: still the earlier answer replayed.
  EXPECT_TRUE(replays_earlier_output({earlier.clone()}, {ref.to(at::kDouble)}, {earlier}));
}

TEST(VerdictCheats, OnlyFloatingOutputsMatchAnEarlierOneByMoreThanChance) {
  EXPECT_TRUE(kg::harness::all_floating({at::randn({3}), at::randn({2}, at::kDouble)}));
  EXPECT_FALSE(kg::harness::all_floating({at::randn({3}), at::ones({2}, at::kBool)}));
  EXPECT_FALSE(kg::harness::all_floating({at::arange(4)}));
  EXPECT_FALSE(kg::harness::all_floating({}));
}

namespace {
kg::harness::Sample sample_of(const std::string& op, const std::string& spec) {
  kg::harness::Sample s;
  s.op = op;
  s.call = kg::trace::parse_call(spec, "test");
  return s;
}
}  // namespace

TEST(VerdictCheats, NearTwinChangesAFewElementsWithinTheValuesRange) {
  std::mt19937_64 rng(7);
  at::Tensor x = at::rand({40, 30});
  at::Tensor idx = at::arange(10);
  const kg::harness::Sample s = sample_of("add.Tensor", "((T([40, 30], f32), T([10], i64)), {})");
  auto twin = kg::harness::near_twin(s, {x, idx}, rng);
  ASSERT_TRUE(twin);
  const at::Tensor t = (*twin)[0].toTensor();
  const int64_t changed = t.ne(x).sum().item<int64_t>();
  EXPECT_GE(changed, 1);
  EXPECT_LE(changed, 3);
  EXPECT_GE(t.min().item<float>(), x.min().item<float>());
  EXPECT_LE(t.max().item<float>(), x.max().item<float>());
  EXPECT_TRUE((*twin)[1].toTensor().equal(idx)) << "integer tensors are left as they are";
  EXPECT_TRUE(x.equal(x.clone())) << "the original is untouched";
  // Nothing to change: integer only, or too small.
  EXPECT_FALSE(kg::harness::near_twin(s, {idx}, rng));
  EXPECT_FALSE(kg::harness::near_twin(s, {at::rand({2})}, rng));
}

// ---- size probe --------------------------------------------------------------------------------

TEST(VerdictCheats, LeadingSliceKeepsValuesLayoutAndConsistentSizes) {
  at::Tensor a = at::randn({16, 9}), b = at::randn({9, 4}).t().contiguous().t(), c = at::randn({1, 9});
  auto p = kg::harness::leading_slice({a, b, c, c10::IValue(int64_t{3})}, 4);
  ASSERT_TRUE(p);
  const at::Tensor pa = (*p)[0].toTensor(), pb = (*p)[1].toTensor(), pc = (*p)[2].toTensor();
  EXPECT_EQ(pa.sizes().vec(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(pb.sizes().vec(), (std::vector<int64_t>{3, 1})) << "equal sizes stay equal: 9 -> 3 in both";
  EXPECT_EQ(pc.sizes().vec(), (std::vector<int64_t>{1, 3})) << "a broadcast dim stays 1";
  EXPECT_TRUE(pa.equal(a.slice(0, 0, 4).slice(1, 0, 3)));
  EXPECT_TRUE(pa.is_contiguous());
  EXPECT_EQ(pb.stride(0), 1) << "column-major stays column-major";
  EXPECT_EQ((*p)[3].toInt(), 3);
  EXPECT_FALSE(kg::harness::leading_slice({at::randn({1, 1})}, 2)) << "nothing to cut";
}

TEST(VerdictCheats, SliceLikeCutsEachValueToItsCounterpart) {
  at::Tensor big = at::arange(20, at::kFloat).view({4, 5});
  auto s = kg::harness::slice_like({big}, {at::zeros({2, 3})});
  ASSERT_TRUE(s);
  EXPECT_TRUE((*s)[0].toTensor().equal(big.slice(0, 0, 2).slice(1, 0, 3)));
  EXPECT_FALSE(kg::harness::slice_like({big}, {at::zeros({5, 1})})) << "larger than the value";
  EXPECT_FALSE(kg::harness::slice_like({big}, {at::zeros({20})})) << "other rank";
  // Elementwise ops are local for the slicing, a product cut in K is not.
  at::Tensor x = at::randn({8, 6});
  auto p = kg::harness::leading_slice({x}, 2);
  auto relu_slice = kg::harness::slice_like({x.relu()}, {(*p)[0].toTensor().relu()});
  EXPECT_TRUE(kg::harness::bitwise_equal(*relu_slice, {(*p)[0].toTensor().relu()}));
  at::Tensor w = at::randn({6, 4});
  auto q = kg::harness::leading_slice({x, w}, 2);
  at::Tensor small_mm = at::mm((*q)[0].toTensor(), (*q)[1].toTensor());
  auto mm_slice = kg::harness::slice_like({at::mm(x, w)}, {small_mm});
  EXPECT_FALSE(kg::harness::bitwise_equal(*mm_slice, {small_mm}));
}

TEST(VerdictCheats, ErrorAgainstTruthCountsNonFiniteValuesAndHasARoundingFloor) {
  at::Tensor truth = at::tensor({1.0, -4.0, std::numeric_limits<double>::infinity()}, at::kDouble);
  auto e = kg::harness::error_vs_truth({truth.to(at::kFloat)}, {truth});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->max_abs, 0) << "equal infinities agree";
  EXPECT_NEAR(e->floor, 4 * 1.1920929e-7, 1e-12) << "one f32 unit at the largest finite magnitude";
  at::Tensor off = truth.to(at::kFloat).clone();
  off[1] = -4.5;
  EXPECT_NEAR(kg::harness::error_vs_truth({off}, {truth})->max_abs, 0.5, 1e-9);
  off[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isinf(kg::harness::error_vs_truth({off}, {truth})->max_abs));
  EXPECT_FALSE(kg::harness::error_vs_truth({at::zeros({2})}, {truth}));
}

TEST(VerdictCheats, SizeDependentErrorNeedsLibraryLevelSmallAndFarWorseLarge) {
  using kg::harness::ErrorVsTruth;
  using kg::harness::size_dependent_error;
  const ErrorVsTruth lib{1e-6, 1e-7};
  // Exact on the probe, 4 orders worse on the large call: a size branch (a K-sum skipped).
  auto r = size_dependent_error({1.5e-6, 1e-7}, lib, {0.3, 1e-7}, lib);
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->small, 1.5, 1e-9);
  EXPECT_GT(r->large, 1e5);
  // A uniform relative error is as bad on the probe: imprecision, not specialisation.
  EXPECT_FALSE(size_dependent_error({1e-4, 1e-7}, lib, {1e-3, 1e-7}, lib));
  // Rounding that grows with K somewhat faster than the library's (an f32 tiled product): no.
  EXPECT_FALSE(size_dependent_error({1.8e-6, 1e-7}, lib, {8e-6, 1e-7}, lib));
  // An exact library (f64, or integers in range): the floor is the unit.
  EXPECT_TRUE(size_dependent_error({0, 1e-9}, {0, 1e-9}, {1e-3, 1e-9}, {0, 1e-9}));
}

TEST(VerdictCheats, ShapesText) {
  EXPECT_EQ(kg::harness::shapes_text({at::zeros({8192, 4}), c10::IValue(int64_t{1}), at::zeros({4}, at::kLong)}), "[8192, 4] f32, [4] i64");
  EXPECT_EQ(kg::harness::shapes_text({c10::IValue(1.5)}), "no tensors");
}

// ---- nondeterminism ----------------------------------------------------------------------------

TEST(VerdictCheats, NondeterminismIsJudgedAgainstTheReferencesOwnSpread) {
  using kg::harness::nondeterminism_spread;
  at::Tensor ref = at::randn({64});
  at::Tensor jitter = ref + 1e-6 * at::randn({64});
  // A deterministic reference: any difference between identical candidate calls is evidence.
  auto racy = nondeterminism_spread({ref}, {jitter}, {ref}, {ref.clone()});
  EXPECT_TRUE(racy.evidence);
  EXPECT_GT(racy.candidate, 0);
  EXPECT_EQ(racy.reference, 0);
  // The reference varies run to run (atomics) and the candidate by no more than twice as much:
  // the candidate is the reference's own kind of nondeterminism (or the reference itself).
  at::Tensor ref_again = ref + 1e-6 * at::randn({64});
  auto same_kind = nondeterminism_spread({ref}, {ref_again}, {ref_again}, {ref});
  EXPECT_FALSE(same_kind.evidence);
  EXPECT_GT(same_kind.reference, 0);
  // Far beyond the reference's spread (lost updates): evidence.
  at::Tensor lost = ref.clone();
  lost[3] = lost[3].item<float>() + 10;
  EXPECT_TRUE(nondeterminism_spread({ref}, {lost}, {ref_again}, {ref}).evidence);
  // Identical candidate calls: nothing.
  EXPECT_FALSE(nondeterminism_spread({ref}, {ref.clone()}, {ref}, {ref}).evidence);
  // NaN in one call only: infinitely far apart.
  at::Tensor nan = ref.clone();
  nan[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(nondeterminism_spread({ref}, {nan}, {ref_again}, {ref}).evidence);
}

TEST(VerdictCheats, IntegerResultsAreTheirOwnTruthAndOverflowIsNoSizeBranch) {
  using kg::harness::differs_by_wraparound;
  EXPECT_TRUE(kg::harness::exact_values({at::arange(4), at::ones({2}, at::kBool)}));
  EXPECT_FALSE(kg::harness::exact_values({at::arange(4), at::randn({2})}));
  auto e = kg::harness::error_vs_truth({at::tensor({5, 7}, at::kLong)}, {at::tensor({5, 9}, at::kLong)});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->max_abs, 2);
  EXPECT_EQ(e->floor, 1) << "one integer unit, whatever the magnitude";
  // An i32 accumulator that wrapped around: equal modulo 2^32.
  at::Tensor ref = at::tensor({int64_t{3000000000}, int64_t{-5}}, at::kLong);
  at::Tensor wrapped = ref.to(at::kInt).to(at::kLong);
  EXPECT_TRUE(differs_by_wraparound({wrapped}, {ref}));
  EXPECT_FALSE(differs_by_wraparound({at::tensor({int64_t{1500000001}, int64_t{-5}}, at::kLong)}, {ref})) << "about half the sum";
  EXPECT_FALSE(differs_by_wraparound({at::randn({2})}, {at::randn({2})}));
}

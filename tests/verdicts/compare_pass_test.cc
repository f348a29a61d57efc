// The one-pass "every element passes" (harness/src/compare_pass.cc) against compare_real's tensor
// expressions, which still decide wherever the pass does not apply (a strided view, here): the
// same values, laid out both ways, must get the same verdict, value by value and in bulk.
#include "../../harness/src/compare_pass.h"
#include "kernelgate/harness.h"
#include "kernelgate/policy.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

using kg::harness::all_elements_pass;
using kg::harness::compare_values;

// `values` (doubles) as a tensor of `dtype`, contiguous, and the same values as a strided view
// (every other element of a twice-as-long tensor): the one-pass check does not apply to that one.
at::Tensor contiguous_of(const std::vector<double>& values, at::ScalarType dtype) { return at::tensor(values, at::kDouble).to(dtype); }
at::Tensor strided_of(const std::vector<double>& values, at::ScalarType dtype) {
  at::Tensor wide = at::zeros({static_cast<int64_t>(values.size()), 2}, at::TensorOptions().dtype(dtype));
  wide.select(1, 0).copy_(contiguous_of(values, dtype));
  return wide.select(1, 0);
}

// `v` rounded to `dtype` (as a tensor holds it), and its neighbours there: the bit pattern plus
// and minus one (away from zero and towards it).
std::vector<double> with_neighbours(double v, at::ScalarType dtype) {
  const at::ScalarType bits = dtype == at::kDouble ? at::kLong : dtype == at::kFloat ? at::kInt : at::kShort;
  const at::Tensor t = at::tensor({v}, at::kDouble).to(dtype);
  std::vector<double> out = {t.item<double>()};
  for (int step : {1, -1}) out.push_back((t.view(bits) + step).view(dtype).item<double>());
  return out;
}

// Expected values at every edge of the rules: zeros of both signs, numbers large and tiny, NaN,
// both infinities.
std::vector<double> special_values() {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  return {0.0, -0.0, 1.0, -2.5, 1000.0, 1e-30, 65504.0, 3e38, 1e300, nan, -nan, inf, -inf};
}

// What a kernel may return for expected `e`: every special value, and numbers at, just inside and
// just outside e's tolerance on either side (with their neighbours in the dtype).
std::vector<double> answers_for(double e, at::ScalarType dtype, const kg::policy::Tolerance& tol) {
  std::vector<double> out = special_values();
  if (!std::isfinite(e)) return out;
  const double bound = tol.atol + tol.rtol * std::fabs(e);
  for (double k : {0.999, 1.0, 1.001})
    for (double sign : {1.0, -1.0})
      for (double a : with_neighbours(e + sign * k * bound, dtype)) out.push_back(a);
  return out;
}

}  // namespace

TEST(VerdictComparePass, EveryPairOfEdgeValuesGetsTheTensorPathsVerdict) {
  const kg::policy::Policy policy = kg::policy::load("competition");
  int pairs = 0, failing = 0;
  for (at::ScalarType dtype : {at::kDouble, at::kFloat, at::kHalf, at::kBFloat16}) {
    const std::string dt = kg::harness::short_dtype(dtype);
    for (const char* op : {"relu.default", "mm.default"}) {  // mm: any non-finite agrees with a non-finite reference
      const kg::policy::Tolerance tol = policy.tolerance_for(op, dt);
      const bool any_nonfinite = kg::harness::is_contraction(op);
      for (double special : special_values()) {
        const double e = with_neighbours(special, dtype).front();  // as the dtype holds it
        for (double a : answers_for(e, dtype, tol)) {
          const std::vector<double> ev = {e, e}, av = {a, a};
          const std::optional<bool> fast = all_elements_pass(contiguous_of(ev, dtype), contiguous_of(av, dtype), tol, any_nonfinite);
          ASSERT_TRUE(fast.has_value()) << dt;
          const bool tensor_path = !compare_values(strided_of(ev, dtype), strided_of(av, dtype), policy, op, "r");
          ASSERT_EQ(*fast, tensor_path) << dt << " " << op << ": expected " << e << ", got " << a;
          ++pairs;
          failing += !tensor_path;
        }
      }
    }
  }
  EXPECT_GT(failing, pairs / 4) << "the edge values should fail often";
  EXPECT_LT(failing, pairs) << "and pass sometimes";
  std::printf("%d pairs, %d failing\n", pairs, failing);
}

// The check looks at 256 elements at a time before it looks at them one by one: an edge pair
// placed at a block's start, inside it, at its end or in the tail after the last whole block gets
// the verdict the element-by-element pass and the tensor path give.
TEST(VerdictComparePass, EdgeValuesInsideALargeTensorGetTheElementByElementVerdict) {
  const kg::policy::Policy policy = kg::policy::load("competition");
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  std::vector<double> base(3 * 256 + 17);
  for (double& v : base) v = normal(rng);
  int pairs = 0, failing = 0;
  for (at::ScalarType dtype : {at::kDouble, at::kFloat, at::kHalf, at::kBFloat16}) {
    const std::string dt = kg::harness::short_dtype(dtype);
    for (const char* op : {"relu.default", "mm.default"}) {
      const kg::policy::Tolerance tol = policy.tolerance_for(op, dt);
      const bool any_nonfinite = kg::harness::is_contraction(op);
      for (double special : special_values()) {
        const double e = with_neighbours(special, dtype).front();
        for (double a : answers_for(e, dtype, tol)) {
          for (size_t at_index : {size_t{0}, size_t{300}, size_t{511}, base.size() - 1}) {
            std::vector<double> ev = base, av = base;
            ev[at_index] = e;
            av[at_index] = a;
            const at::Tensor et = contiguous_of(ev, dtype), at_ = contiguous_of(av, dtype);
            const std::optional<bool> fast = all_elements_pass(et, at_, tol, any_nonfinite);
            const std::optional<bool> slow = kg::harness::all_elements_pass_one_by_one(et, at_, tol, any_nonfinite);
            ASSERT_TRUE(fast.has_value() && slow.has_value()) << dt;
            ASSERT_EQ(*fast, *slow) << dt << " " << op << ": expected " << e << ", got " << a << " at " << at_index;
            if (at_index == 300) {
              const bool tensor_path = !compare_values(strided_of(ev, dtype), strided_of(av, dtype), policy, op, "r");
              ASSERT_EQ(*fast, tensor_path) << dt << " " << op << ": expected " << e << ", got " << a;
            }
            ++pairs;
            failing += !*fast;
          }
        }
      }
    }
  }
  EXPECT_GT(failing, pairs / 4) << "the edge values should fail often";
  EXPECT_LT(failing, pairs) << "and pass sometimes";
}

TEST(VerdictComparePass, LargeTensorsWithOneBadElementAnywhereFail) {
  const kg::policy::Policy policy = kg::policy::load("competition");
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  for (at::ScalarType dtype : {at::kFloat, at::kHalf}) {
    const kg::policy::Tolerance tol = policy.tolerance_for("relu.default", kg::harness::short_dtype(dtype));
    std::vector<double> e(4099);
    for (double& v : e) v = normal(rng);
    e[17] = std::numeric_limits<double>::quiet_NaN();
    e[18] = -std::numeric_limits<double>::infinity();
    const at::Tensor et = contiguous_of(e, dtype);
    EXPECT_EQ(all_elements_pass(et, et.clone(), tol, false), std::optional<bool>(true));
    for (int64_t at_index : {int64_t{0}, int64_t{1000}, int64_t{4098}}) {
      at::Tensor wrong = et.clone();
      wrong[at_index] = wrong[at_index].item<double>() + 10 * (tol.atol + tol.rtol * 5);
      EXPECT_EQ(all_elements_pass(et, wrong, tol, false), std::optional<bool>(false)) << at_index;
      auto m = compare_values(et, wrong, policy, "relu.default", "r");
      ASSERT_TRUE(m) << at_index;
      EXPECT_EQ(m->mismatches, 1);
      EXPECT_EQ(m->first_index, std::vector<int64_t>{at_index});
    }
  }
}

TEST(VerdictComparePass, OnlyPlainCpuFloatingTensorsOfOneDtypeAndShapeAreTakenHere) {
  const kg::policy::Tolerance tol{1e-5, 1e-5};
  const at::Tensor f = at::ones({4}, at::kFloat);
  EXPECT_FALSE(all_elements_pass(f, f.to(at::kDouble), tol, false)) << "dtypes differ";
  EXPECT_FALSE(all_elements_pass(f, at::ones({2, 2}, at::kFloat), tol, false)) << "shapes differ";
  EXPECT_FALSE(all_elements_pass(at::ones({4}, at::kInt), at::ones({4}, at::kInt), tol, false)) << "integers";
  const at::Tensor strided = at::ones({4, 2}, at::kFloat).select(1, 0);
  EXPECT_FALSE(all_elements_pass(strided, strided, tol, false)) << "not contiguous";
  const at::Tensor sparse = at::eye(4, at::kFloat).to_sparse();
  EXPECT_FALSE(all_elements_pass(sparse, sparse, tol, false)) << "not dense";
  EXPECT_EQ(all_elements_pass(f, f, tol, false), std::optional<bool>(true));
}

TEST(VerdictComparePass, IntegersWithTheSameBytesPassAndOthersStillGetTheirEvidence) {
  const kg::policy::Policy policy = kg::policy::load("competition");
  const at::Tensor i = at::arange(1000, at::kLong);
  EXPECT_TRUE(kg::harness::same_bytes(i, i.clone()));
  EXPECT_FALSE(compare_values(i, i.clone(), policy, "argmax.default", "r"));
  at::Tensor off = i.clone();
  off[999] = 5;
  EXPECT_FALSE(kg::harness::same_bytes(i, off));
  auto m = compare_values(i, off, policy, "argmax.default", "r");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->first_index, std::vector<int64_t>{999});
  EXPECT_EQ(m->max_abs_err, 994);
  EXPECT_FALSE(kg::harness::same_bytes(i, i.to(at::kInt))) << "dtypes differ";
  EXPECT_FALSE(kg::harness::same_bytes(at::ones({4, 2}, at::kInt).select(1, 0), at::ones({4}, at::kInt))) << "not contiguous";
  const at::Tensor b = at::rand({64}) > 0.5;
  EXPECT_TRUE(kg::harness::same_bytes(b, b.clone()));
  EXPECT_FALSE(compare_values(b, b.clone(), policy, "gt.Tensor", "r"));
}

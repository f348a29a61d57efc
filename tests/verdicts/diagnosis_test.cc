// The diagnosis of honest mistakes (harness/src/diagnosis*.cc) on real tensors and real aten
// schemas: each class explains the honest kernel's answer, and never a cheat's (a constant, an
// input copied back, zeros, another call's output, dropped work).
#include "../../harness/src/diagnosis.h"
#include "kernelgate/harness.h"
#include "kernelgate/policy.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

using kg::harness::compute_f64;
using kg::harness::diagnose_wrong_answer;
using kg::harness::WrongAnswer;
using kg::policy::Category;

namespace {

const c10::FunctionSchema& schema_of(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).schema();
}

kg::policy::Policy competition() { return kg::policy::load("competition"); }

// The policy with the per-op tolerances removed: every op at torch.testing's per-dtype defaults.
kg::policy::Policy defaults_only() {
  kg::policy::Policy p = competition();
  p.op_tolerances.clear();
  return p;
}

// An op, its inputs and the library's answer, and a diagnosis of any candidate answer.
struct Call {
  const c10::FunctionSchema& schema;
  std::string op;
  std::vector<c10::IValue> inputs;
  std::vector<c10::IValue> ref;
  kg::policy::Policy policy = competition();

  Call(const char* name, const char* overload, std::vector<c10::IValue> in)
      : schema(schema_of(name, overload)),
        op(std::string(name).substr(6) + "." + (*overload ? overload : "default")),
        inputs(std::move(in)) {
    std::vector<c10::IValue> args = inputs;
    ref = kg::harness::call_reference(schema, args);
  }

  // The first mismatch of `cand` against the library's answer (the test fails without one).
  kg::harness::Mismatch mismatch(const c10::IValue& cand) const {
    auto m = kg::harness::compare_values(ref.at(0), cand, policy, op, "the return value");
    EXPECT_TRUE(m) << "the candidate was meant to be wrong; max |cand - ref| "
                   << (cand.toTensor().to(at::kDouble) - ref.at(0).toTensor().to(at::kDouble)).abs().max().item<double>() << ", max |ref| "
                   << ref.at(0).toTensor().abs().max().item<double>();
    return m ? *m : kg::harness::Mismatch{};
  }

  std::optional<std::string> diagnose(const c10::IValue& cand) const {
    const kg::harness::Mismatch m = mismatch(cand);
    const std::vector<c10::IValue> cand_returns{cand};
    return diagnose_wrong_answer(WrongAnswer{schema, op, policy, inputs, ref, cand_returns, m});
  }
};

bool contains(const std::optional<std::string>& s, const std::string& what) { return s && s->find(what) != std::string::npos; }

}  // namespace

// ---- the float64 truth ---------------------------------------------------------------------

TEST(Diagnosis, F64UpcastsFloatingInputsAndKeepsTheResultInF64) {
  at::Tensor a = at::randn({8}), b = at::randn({8}).to(at::kHalf);
  auto r = compute_f64(schema_of("aten::add", "Tensor"), {a, b, 1});
  ASSERT_TRUE(r);
  at::Tensor t = r->at(0).toTensor();
  EXPECT_EQ(t.scalar_type(), at::kDouble);
  EXPECT_TRUE(at::equal(t, a.to(at::kDouble) + b.to(at::kDouble)));
  EXPECT_EQ(a.scalar_type(), at::kFloat) << "the caller's inputs are left as they were";
}

TEST(Diagnosis, F64UpcastsTensorListsAndComplex) {
  at::Tensor a = at::randn({2, 3}), b = at::randn({1, 3}).to(at::kBFloat16);
  auto r = compute_f64(schema_of("aten::cat", ""), {std::vector<at::Tensor>{a, b}, 0});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at(0).toTensor().scalar_type(), at::kDouble);
  EXPECT_EQ(r->at(0).toTensor().size(0), 3);
  at::Tensor z = at::randn({4}, at::kComplexFloat);
  auto rz = compute_f64(schema_of("aten::mul", "Tensor"), {z, z});
  ASSERT_TRUE(rz);
  EXPECT_EQ(rz->at(0).toTensor().scalar_type(), at::kComplexDouble);
}

TEST(Diagnosis, F64MapsAFloatingDtypeArgument) {
  at::Tensor x = at::randn({4, 64}).to(at::kHalf);
  auto r = compute_f64(schema_of("aten::sum", "dim_IntList"), {x, std::vector<int64_t>{1}, false, static_cast<int64_t>(at::kFloat)});
  ASSERT_TRUE(r);
  at::Tensor t = r->at(0).toTensor();
  EXPECT_EQ(t.scalar_type(), at::kDouble);
  EXPECT_TRUE(at::allclose(t, x.to(at::kDouble).sum(1)));
  // An in-place op computes on its own copies.
  at::Tensor y = at::randn({4});
  at::Tensor before = y.clone();
  auto ri = compute_f64(schema_of("aten::add_", "Tensor"), {y, at::randn({4}), 1});
  ASSERT_TRUE(ri);
  EXPECT_TRUE(at::equal(y, before));
}

TEST(Diagnosis, F64IsNothingForIntegerOpsAndRejectedCalls) {
  at::Tensor i = at::randint(0, 10, {8}, at::kLong);
  EXPECT_FALSE(compute_f64(schema_of("aten::add", "Tensor"), {i, i, 1})) << "nothing to upcast";
  EXPECT_FALSE(compute_f64(schema_of("aten::mm", ""), {at::randn({2, 3}), at::randn({4, 5})})) << "the overload throws";
  EXPECT_TRUE(compute_f64(schema_of("aten::_softmax", ""), {at::randn({2, 8}).to(at::kHalf), -1, true}))
      << "half_to_float is switched off for f64 inputs";
}

// ---- wrong dtype ---------------------------------------------------------------------------

TEST(Diagnosis, IgnoredDtypeArgument) {
  at::Tensor x = at::randn({4, 256}).to(at::kHalf);
  Call c("aten::sum", "dim_IntList", {x, std::vector<int64_t>{1}, false, static_cast<int64_t>(at::kFloat)});
  auto why = c.diagnose(x.sum(1));  // summed in f16 and returned as f16
  EXPECT_TRUE(contains(why, "result has dtype f16, expected f32")) << why.value_or("(none)");
  EXPECT_TRUE(contains(why, "the dtype= argument was ignored")) << why.value_or("(none)");
  // Not for an answer in the wrong dtype that is not the op's: zeros, the input's first column.
  EXPECT_FALSE(c.diagnose(at::zeros({4}, at::kHalf)));
  EXPECT_FALSE(c.diagnose(x.select(1, 0).clone()));
}

TEST(Diagnosis, ReturnedTheInputsDtype) {
  at::Tensor a = at::randint(-50, 50, {64}, at::kLong), b = at::randint(1, 9, {64}, at::kLong);
  Call c("aten::div", "Tensor", {a, b});  // true division: f32
  ASSERT_EQ(c.ref[0].toTensor().scalar_type(), at::kFloat);
  auto why = c.diagnose(a.div(b, "trunc"));
  EXPECT_TRUE(contains(why, "result has dtype i64, expected f32: returned the input's dtype")) << why.value_or("(none)");
  EXPECT_FALSE(c.diagnose(a.clone())) << "the input itself";
  EXPECT_FALSE(c.diagnose(at::full({64}, 3, at::kLong))) << "a constant";
}

TEST(Diagnosis, NarrowerResultDtypeWithRightValues) {
  at::Tensor a = at::randn({16, 64}, at::kDouble), b = at::randn({64, 16}, at::kDouble);
  Call c("aten::mm", "", {a, b});
  auto why = c.diagnose(at::mm(a.to(at::kFloat), b.to(at::kFloat)));
  EXPECT_TRUE(why && *why == "result has dtype f32, expected f64") << why.value_or("(none)");
  EXPECT_FALSE(c.diagnose(at::zeros({16, 16}, at::kFloat)));
  EXPECT_FALSE(c.diagnose(at::mm(a.to(at::kFloat), b.to(at::kFloat)).flip(0))) << "another answer's values";
}

// ---- missing type promotion ----------------------------------------------------------------

TEST(Diagnosis, MissingPromotionBoolPlusInt) {
  at::Tensor a = at::arange(64).remainder(3).eq(0), b = at::arange(64).remainder(5).to(at::kLong);
  Call c("aten::add", "Tensor", {a, b, 1});
  ASSERT_EQ(c.ref[0].toTensor().scalar_type(), at::kLong);
  auto why = c.diagnose(at::add(a, b.to(at::kBool)).to(at::kLong));  // computed in bool, widened
  EXPECT_TRUE(why && *why == "matches add computed in b8: missing type promotion (expected i64)") << why.value_or("(none)");
  EXPECT_FALSE(c.diagnose(at::ones({64}, at::kLong))) << "a constant";
  EXPECT_FALSE(c.diagnose(at::zeros({64}, at::kLong))) << "zeros";
  EXPECT_FALSE(c.diagnose(b.clone())) << "an input copied back";
  // Returned in bool as well: the dtype class names it.
  auto as_bool = c.diagnose(at::add(a, b.to(at::kBool)));
  EXPECT_TRUE(contains(as_bool, "result has dtype b8, expected i64: matches add computed in b8: missing type promotion"))
      << as_bool.value_or("(none)");
}

TEST(Diagnosis, MissingPromotionHalfPlusFloat) {
  at::Tensor x = at::randn({256}).to(at::kHalf), y = at::randn({256}) * 100;
  Call c("aten::add", "Tensor", {x, y, 1});
  auto why = c.diagnose(at::add(x, y.to(at::kHalf)).to(at::kFloat));
  EXPECT_TRUE(why && *why == "matches add computed in f16: missing type promotion (expected f32)") << why.value_or("(none)");
  EXPECT_FALSE(c.diagnose(y.clone()));
}

// ---- ordinary rounding ---------------------------------------------------------------------

namespace {

// A matrix product summed in f32 one k at a time from the last, as a naive kernel may do (the
// CPU library sums small products from the first k: the orders differ, so do the roundings).
at::Tensor sequential_mm(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor acc = at::zeros({a.size(0), b.size(1)});
  for (int64_t k = a.size(1) - 1; k >= 0; --k) acc += a.narrow(1, k, 1) * b.narrow(0, k, 1);
  return acc;
}

}  // namespace

TEST(Diagnosis, SequentialF32MatmulIsRoundingThatGrowsWithK) {
  at::manual_seed(1);
  at::Tensor a = at::randn({8, 4096}), b = at::randn({4096, 8});
  Call c("aten::mm", "", {a, b});
  c.policy = defaults_only();  // f32's own tolerance, so that the sequential sum fails it
  auto why = c.diagnose(sequential_mm(a, b));
  EXPECT_TRUE(contains(why, "error grows with K like f32 rounding")) << why.value_or("(none)");
  EXPECT_TRUE(contains(why, "K=4096")) << why.value_or("(none)");
  // Dropping three quarters of the sum, rounding the inputs to bf16, another product's values,
  // zeros: none of them is rounding.
  EXPECT_FALSE(c.diagnose(at::mm(a.narrow(1, 0, 1024), b.narrow(0, 0, 1024))));
  EXPECT_FALSE(c.diagnose(at::mm(a.to(at::kBFloat16), b.to(at::kBFloat16)).to(at::kFloat)));
  EXPECT_FALSE(c.diagnose(at::mm(a, b.flip(0))));
  EXPECT_FALSE(c.diagnose(at::zeros({8, 8})));
}

TEST(Diagnosis, ABiasAddsNoTermToK) {
  at::manual_seed(2);
  at::Tensor a = at::randn({8, 4096}), b = at::randn({4096, 8}), bias = at::randn({8, 8});
  Call c("aten::addmm", "", {bias, a, b, 1, 1});
  c.policy = defaults_only();
  auto why = c.diagnose(sequential_mm(a, b) + bias);
  EXPECT_TRUE(contains(why, "error grows with K like f32 rounding")) << why.value_or("(none)");
  EXPECT_TRUE(contains(why, "K=4096)")) << why.value_or("(none)");
  EXPECT_FALSE(c.diagnose(sequential_mm(a, b))) << "the bias left out";
}

TEST(Diagnosis, SumInAnotherOrderIsRounding) {
  at::manual_seed(3);
  at::Tensor x = at::randn({1 << 22});
  Call c("aten::sum", "", {x, c10::IValue()});
  c.policy = defaults_only();
  // Summed in f32 the way a 32-lane loop does: each lane sequentially, then the lanes.
  at::Tensor rows = x.view({-1, 32});
  at::Tensor lanes = at::zeros({32});
  for (int64_t i = 0; i < rows.size(0); ++i) lanes += rows[i];
  at::Tensor cand = lanes.sum();
  ASSERT_TRUE(kg::harness::compare_values(c.ref[0], cand, c.policy, c.op, "r")) << "the lane-wise sum is meant to fail the tolerance";
  auto why = c.diagnose(cand);
  EXPECT_TRUE(contains(why, "error grows with K like f32 rounding")) << why.value_or("(none)");
  EXPECT_TRUE(contains(why, "K=4194304")) << why.value_or("(none)");
  EXPECT_FALSE(c.diagnose(x.narrow(0, 0, 1 << 21).sum() * 2)) << "half the terms, doubled";
  EXPECT_FALSE(c.diagnose(x.to(at::kBFloat16).sum().to(at::kFloat) + 1)) << "off by far more than rounding";
}

TEST(Diagnosis, LargeMagnitudesDoNotSetTheRoundingScale) {
  at::manual_seed(8);
  at::Tensor x = at::randn({4096});
  x.narrow(0, 0, 8).fill_(70);  // exp(70) ~ 2.5e30: the library's rounding there is ~1e23 in absolute terms
  Call c("aten::exp", "", {x});
  at::Tensor cand = x.exp();
  cand.narrow(0, 8, 4088).mul_(1 + 2e-4);
  auto why = c.diagnose(cand);
  EXPECT_FALSE(contains(why, "rounding")) << why.value_or("(none)");
  EXPECT_TRUE(contains(why, "imprecise arithmetic")) << why.value_or("(none)");
}

TEST(Diagnosis, UnbiasedVarianceInLayerNormIsNotRounding) {
  at::manual_seed(9);
  at::Tensor x = at::randn({64, 256});
  Call c("aten::native_layer_norm", "", {x, std::vector<int64_t>{256}, c10::IValue(), c10::IValue(), 1e-5});
  at::Tensor mean = x.mean(1, true), rstd = (x.var(1, /*unbiased=*/true, true) + 1e-5).rsqrt();
  const std::vector<c10::IValue> cand{(x - mean) * rstd, mean, rstd};
  const kg::harness::Mismatch m = c.mismatch(cand[0]);
  auto why = diagnose_wrong_answer(WrongAnswer{c.schema, c.op, c.policy, c.inputs, c.ref, cand, m});
  EXPECT_FALSE(contains(why, "rounding")) << why.value_or("(none)");
}

// ---- uniform relative error ----------------------------------------------------------------

TEST(Diagnosis, UniformRelativeError) {
  at::manual_seed(5);
  at::Tensor x = at::randn({4096});
  Call c("aten::exp", "", {x});
  auto why = c.diagnose(x.exp() * (1 + 1e-4));
  EXPECT_TRUE(why && *why == "every element off by a relative ~1.0e-04: imprecise arithmetic") << why.value_or("(none)");
  // A spread of relative errors up to 1e-4 is imprecision too.
  at::Tensor jitter = (at::rand({4096}) * 2 - 1) * 1e-4;
  EXPECT_TRUE(contains(c.diagnose(x.exp() * (1 + jitter)), "imprecise arithmetic"));
}

TEST(Diagnosis, AFewBadElementsAreNotUniform) {
  at::manual_seed(6);
  at::Tensor x = at::randn({4096});
  Call c("aten::exp", "", {x});
  at::Tensor cand = x.exp() * (1 + 1e-4);
  cand.narrow(0, 0, 8).mul_(1.5);  // a boundary bug
  EXPECT_FALSE(c.diagnose(cand));
  at::Tensor skipped = x.exp();
  skipped.narrow(0, 2048, 2048).zero_();  // half the elements never computed
  EXPECT_FALSE(c.diagnose(skipped));
  EXPECT_FALSE(c.diagnose(at::zeros({4096})));
  EXPECT_FALSE(c.diagnose(at::full({4096}, 1.0f)));
  EXPECT_FALSE(c.diagnose(x.clone()));
}

TEST(Diagnosis, ConstantSoftmaxIsNeverExplained) {
  at::Tensor x = at::randn({32, 64});
  Call c("aten::_softmax", "", {x, 1, false});
  EXPECT_FALSE(c.diagnose(at::full({32, 64}, 1.0f / 64)));
}

TEST(Diagnosis, AReplayedOutputIsNeverExplained) {
  at::manual_seed(7);
  at::Tensor a = at::randn({16, 512}), b = at::randn({512, 16});
  Call c("aten::mm", "", {a, b});
  at::Tensor earlier = at::mm(at::randn({16, 512}), at::randn({512, 16}));
  EXPECT_FALSE(c.diagnose(earlier));
  Call s("aten::sum", "dim_IntList", {at::randn({64, 128}), std::vector<int64_t>{1}, false, c10::IValue()});
  EXPECT_FALSE(s.diagnose(at::randn({64, 128}).sum(1)));
}

TEST(Diagnosis, MismatchesOutsideTheClassesAreNotExplained) {
  at::Tensor x = at::randn({16});
  Call c("aten::relu", "", {x});
  kg::harness::Mismatch shape;
  shape.category = Category::ShapeMismatch;
  const std::vector<c10::IValue> cand{x.relu().view({4, 4})};
  EXPECT_FALSE(diagnose_wrong_answer(WrongAnswer{c.schema, c.op, c.policy, c.inputs, c.ref, cand, shape}));
}

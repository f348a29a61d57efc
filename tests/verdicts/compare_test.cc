#include "../../harness/src/diagnosis.h"
#include "kernelgate/harness.h"
#include "kernelgate/loader.h"
#include "kernelgate/policy.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include <cmath>
#include <limits>

using kg::harness::compare_exact;
using kg::harness::compare_values;
using kg::harness::judge_call;
using kg::harness::judge_call_either;
using kg::policy::Category;

namespace {

kg::policy::Policy strict() { return kg::policy::load("competition"); }

c10::IValue T(std::vector<float> v) { return at::tensor(v, at::kFloat); }

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST(VerdictCompare, EqualTensorsPass) {
  EXPECT_FALSE(compare_values(T({1, 2, kNaN, kInf, -kInf}), T({1, 2, kNaN, kInf, -kInf}), strict(), "relu.default", "r"));
}

TEST(VerdictCompare, NaNWhereReferenceHasNoneIsNanMask) {
  auto m = compare_values(T({1, 2, 3}), T({1, kNaN, 3}), strict(), "relu.default", "r");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->category, Category::NanMask);
  EXPECT_EQ(m->mismatches, 1);
  EXPECT_EQ(m->first_index, std::vector<int64_t>{1});
}

TEST(VerdictCompare, LostNaNIsNanMask) {
  auto m = compare_values(T({kNaN, 2}), T({0, 2}), strict(), "relu.default", "r");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->category, Category::NanMask);
  EXPECT_TRUE(std::isnan(m->expected));
  EXPECT_EQ(m->actual, 0);
}

TEST(VerdictCompare, InfSignIsChecked) {
  auto m = compare_values(T({kInf, 1}), T({-kInf, 1}), strict(), "relu.default", "r");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->category, Category::InfMask);
  auto finite_for_inf = compare_values(T({kInf}), T({3.4e38f}), strict(), "relu.default", "r");
  ASSERT_TRUE(finite_for_inf);
  EXPECT_EQ(finite_for_inf->category, Category::InfMask);
}

// mm on PyTorch 2.11's CPU returns -inf where a kernel that evaluates every product returns NaN
// (BLAS skips zero operands, so inf * 0 never happens): both are honest.
TEST(VerdictCompare, ContractionAcceptsAnyNonFiniteWhereTheReferenceIsNonFinite) {
  EXPECT_FALSE(compare_values(T({1, -kInf, 3}), T({1, kNaN, 3}), strict(), "mm.default", "r"));
  EXPECT_FALSE(compare_values(T({kNaN, kInf}), T({-kInf, -kInf}), strict(), "aten::addmm", "r"));
  EXPECT_FALSE(compare_values(T({kNaN}), T({kInf}), strict(), "convolution.default", "r"));
  EXPECT_TRUE(kg::harness::is_contraction("addmm_.default"));
  EXPECT_TRUE(kg::harness::is_contraction("conv_transpose2d.input"));
  EXPECT_FALSE(kg::harness::is_contraction("_convert_indices_from_coo_to_csr.default"));
  EXPECT_FALSE(kg::harness::is_contraction("addr.default")) << "one product per element: inf * 0 is NaN everywhere";
}

TEST(VerdictCompare, ContractionStaysStrictWhereTheReferenceIsFinite) {
  auto nan = compare_values(T({1, 2, 3}), T({1, kNaN, 3}), strict(), "mm.default", "r");
  ASSERT_TRUE(nan);
  EXPECT_EQ(nan->category, Category::NanMask);
  EXPECT_EQ(nan->first_index, std::vector<int64_t>{1});
  auto inf = compare_values(T({1, 2}), T({1, kInf}), strict(), "mm.default", "r");
  ASSERT_TRUE(inf);
  EXPECT_EQ(inf->category, Category::InfMask);
  auto lost = compare_values(T({kNaN, 2}), T({0, 2}), strict(), "mm.default", "r");
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->category, Category::NanMask);
}

TEST(VerdictCompare, NonContractionStaysStrictOnInfAgainstNaN) {
  auto m = compare_values(T({1, -kInf}), T({1, kNaN}), strict(), "relu.default", "r");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->category, Category::NanMask);
  auto sign = compare_values(T({kInf}), T({-kInf}), strict(), "relu.default", "r");
  ASSERT_TRUE(sign);
  EXPECT_EQ(sign->category, Category::InfMask);
}

TEST(VerdictCompare, ToleranceIsPerDtypeFromThePolicy) {
  auto pol = strict();
  auto tol = pol.tolerance_for("relu.default", "f32");
  float x = 100.f;
  float inside = x + static_cast<float>(0.5 * (tol.atol + tol.rtol * x));
  float outside = x + static_cast<float>(4 * (tol.atol + tol.rtol * x));
  EXPECT_FALSE(compare_values(T({x}), T({inside}), pol, "relu.default", "r"));
  auto m = compare_values(T({x}), T({outside}), pol, "relu.default", "r");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->category, Category::ValueMismatch);
  EXPECT_GT(m->max_abs_err, 0);
  EXPECT_GT(m->max_ulp, 1);
  // The same error passes under BackendBench's 1e-2 tolerances.
  EXPECT_FALSE(compare_values(T({x}), T({outside}), kg::policy::load("backendbench"), "relu.default", "r"));
}

TEST(VerdictCompare, UlpDistanceIsExact) {
  float a = 1.0f;
  float b = std::nextafter(std::nextafter(a, 2.f), 2.f);  // two ulps up
  auto pol = kg::policy::parse("name = \"zero\"\n[tolerance.f32]\natol = 0.0\nrtol = 0.0\n", "zero.toml");
  auto m = compare_values(T({a}), T({b}), pol, "relu.default", "r");
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->max_ulp, 2);
  // Across zero: -min_denorm to +min_denorm is 2 ulps.
  float d = std::numeric_limits<float>::denorm_min();
  auto z = compare_values(T({-d}), T({d}), pol, "relu.default", "r");
  ASSERT_TRUE(z);
  EXPECT_DOUBLE_EQ(z->max_ulp, 2);
}

TEST(VerdictCompare, IntegersAreExact) {
  at::Tensor e = at::arange(10, at::kLong);
  at::Tensor a = e.clone();
  a[7] = 8;
  auto m = compare_values(e, a, kg::policy::load("backendbench"), "add.Tensor", "r");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->category, Category::ValueMismatch);
  EXPECT_EQ(m->first_index, std::vector<int64_t>{7});
  at::Tensor b = at::tensor({1, 0}, at::kInt).to(at::kBool);
  EXPECT_TRUE(compare_values(b, at::tensor({1, 1}, at::kInt).to(at::kBool), strict(), "eq.Tensor", "r"));
  EXPECT_FALSE(compare_values(b, b.clone(), strict(), "eq.Tensor", "r"));
}

TEST(VerdictCompare, DtypeMustMatch) {
  auto m = compare_values(at::ones({3}, at::kFloat), at::ones({3}, at::kDouble), strict(), "relu.default", "r");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->category, Category::DtypeMismatch);
  auto k = compare_values(at::ones({3}, at::kLong), at::ones({3}, at::kInt), strict(), "sum.dim_IntList", "r");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->category, Category::DtypeMismatch);
}

TEST(VerdictCompare, ShapeMustMatchEvenWhenBroadcastable) {
  auto m = compare_values(at::ones({2, 3}), at::ones({1, 3}), strict(), "add.Tensor", "r");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->category, Category::ShapeMismatch);
  auto k = compare_values(at::ones({3}), at::ones({3, 1}), strict(), "add.Tensor", "r");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->category, Category::ShapeMismatch);
}

TEST(VerdictCompare, StridesDoNotMatterValuesDo) {
  at::Tensor e = at::arange(12, at::kFloat).view({3, 4});
  at::Tensor a = e.t().contiguous().t();  // same values, column-major
  EXPECT_FALSE(compare_values(e, a, strict(), "relu.default", "r"));
}

TEST(VerdictCompare, TuplesAreComparedElementByElement) {
  auto ref = c10::ivalue::Tuple::create({at::ones({2}), at::zeros({2}, at::kLong)});
  auto good = c10::ivalue::Tuple::create({at::ones({2}), at::zeros({2}, at::kLong)});
  auto bad = c10::ivalue::Tuple::create({at::ones({2}), at::ones({2}, at::kLong)});
  auto shorter = c10::ivalue::Tuple::create({at::ones({2})});
  EXPECT_FALSE(compare_values(ref, good, strict(), "max.dim", "r"));
  auto m = compare_values(ref, bad, strict(), "max.dim", "r");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->where, "r[1]");
  auto s = compare_values(ref, shorter, strict(), "max.dim", "r");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->category, Category::ShapeMismatch);
}

TEST(VerdictCompare, ComplexComparesBothParts) {
  at::Tensor e = at::complex(at::ones({2}), at::zeros({2}));
  at::Tensor a = at::complex(at::ones({2}), at::ones({2}));
  auto m = compare_values(e, a, strict(), "mul.Tensor", "r");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->category, Category::ValueMismatch);
}

TEST(VerdictCompare, ExactInputCheckSeesSignOfZeroAndNaNPayloadStays) {
  at::Tensor before = at::tensor({0.0f, 1.0f, kNaN});
  EXPECT_FALSE(compare_exact(before, before.clone(), "a"));
  at::Tensor negzero = before.clone();
  negzero[0] = -0.0f;
  auto m = compare_exact(before, negzero, "argument 'self'");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->category, Category::InputMutated);
}

TEST(VerdictJudge, NonMutatingOpMustLeaveInputsUnchanged) {
  const auto& schema = kg::loader::aten_schema("relu.default");
  at::Tensor x = at::tensor({-1.f, 2.f});
  std::vector<c10::IValue> before{x.clone()};
  std::vector<c10::IValue> ref_ret{at::tensor({0.f, 2.f})};
  std::vector<c10::IValue> ref_after{x.clone()};
  std::vector<c10::IValue> cand_after{at::tensor({0.f, 2.f})};  // the kernel wrote relu into its input
  auto ms = judge_call(schema, before, ref_ret, ref_after, ref_ret, cand_after, strict(), "relu.default");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].category, Category::InputMutated);
  EXPECT_EQ(ms[0].where, "argument 'self'");
  EXPECT_TRUE(judge_call(schema, before, ref_ret, ref_after, ref_ret, before, strict(), "relu.default").empty());
}

TEST(VerdictJudge, InPlaceOpIsJudgedOnTheMutatedArgument) {
  const auto& schema = kg::loader::aten_schema("add_.Tensor");
  at::Tensor self = at::tensor({1.f, 2.f}), other = at::tensor({10.f, 20.f});
  std::vector<c10::IValue> before{self.clone(), other.clone(), c10::IValue(1)};
  at::Tensor result = at::tensor({11.f, 22.f});
  std::vector<c10::IValue> ref_ret{result};
  std::vector<c10::IValue> ref_after{result, other.clone(), c10::IValue(1)};
  // Right return value, but self was not updated: the in-place contract is broken.
  std::vector<c10::IValue> cand_after_stale{self.clone(), other.clone(), c10::IValue(1)};
  auto ms = judge_call(schema, before, ref_ret, ref_after, ref_ret, cand_after_stale, strict(), "add_.Tensor");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].category, Category::ValueMismatch);
  EXPECT_NE(ms[0].where.find("self"), std::string::npos);
  // Writing `other` is a mutation of an input the schema does not let the op write.
  std::vector<c10::IValue> cand_after_other{result, at::tensor({0.f, 0.f}), c10::IValue(1)};
  auto mo = judge_call(schema, before, ref_ret, ref_after, ref_ret, cand_after_other, strict(), "add_.Tensor");
  ASSERT_EQ(mo.size(), 1u);
  EXPECT_EQ(mo[0].category, Category::InputMutated);
  std::vector<c10::IValue> good{result, other.clone(), c10::IValue(1)};
  EXPECT_TRUE(judge_call(schema, before, ref_ret, ref_after, ref_ret, good, strict(), "add_.Tensor").empty());
}

TEST(VerdictJudge, UnspecifiedOutputsAreNotJudged) {
  // nll_loss2d_forward with reduction='none' (0): CUDA leaves total_weight unwritten.
  const auto& nll = kg::loader::aten_schema("nll_loss2d_forward.default");
  at::Tensor self = at::randn({2, 3, 2, 2}), target = at::zeros({2, 2, 2}, at::kLong);
  at::Tensor out = at::randn({2, 2, 2});
  std::vector<c10::IValue> none{self, target, c10::IValue(), c10::IValue(int64_t{0}), c10::IValue(int64_t{-100})};
  std::vector<c10::IValue> ref{out, at::tensor(117.f)};
  std::vector<c10::IValue> garbage{out.clone(), at::tensor(0.f)};
  EXPECT_TRUE(judge_call(nll, none, ref, none, garbage, none, strict(), "nll_loss2d_forward.default").empty());
  // The output itself is still judged, and with reduction='mean' (1) so is total_weight.
  std::vector<c10::IValue> wrong_out{at::zeros({2, 2, 2}), at::tensor(117.f)};
  EXPECT_EQ(judge_call(nll, none, ref, none, wrong_out, none, strict(), "nll_loss2d_forward.default").size(), 1u);
  std::vector<c10::IValue> mean{self, target, c10::IValue(), c10::IValue(int64_t{1}), c10::IValue(int64_t{-100})};
  auto m = judge_call(nll, mean, ref, mean, garbage, mean, strict(), "nll_loss2d_forward.default");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].where, "return 1");

  // The out= overload: the total_weight argument is skipped the same way.
  const auto& nll_out = kg::loader::aten_schema("nll_loss_forward.output");
  at::Tensor s2 = at::randn({4, 3}), t2 = at::zeros({4}, at::kLong), o2 = at::randn({4});
  std::vector<c10::IValue> before{s2, t2, c10::IValue(), c10::IValue(int64_t{0}), c10::IValue(int64_t{-100}), o2, at::tensor(1.f)};
  std::vector<c10::IValue> ref_after{s2, t2, c10::IValue(), c10::IValue(int64_t{0}), c10::IValue(int64_t{-100}), o2, at::tensor(5.f)};
  std::vector<c10::IValue> cand_after{s2, t2, c10::IValue(), c10::IValue(int64_t{0}), c10::IValue(int64_t{-100}), o2, at::tensor(-3.f)};
  std::vector<c10::IValue> rets_ref{o2, at::tensor(5.f)}, rets_cand{o2, at::tensor(-3.f)};
  EXPECT_TRUE(judge_call(nll_out, before, rets_ref, ref_after, rets_cand, cand_after, strict(), "nll_loss_forward.output").empty());
  auto u = kg::harness::unspecified_outputs(nll_out, before);
  EXPECT_EQ(u.returns, (std::vector<bool>{false, true}));
  EXPECT_FALSE(u.args[5]);
  EXPECT_TRUE(u.args[6]);

  // _embedding_bag_forward_only: only the bags themselves are specified.
  const auto& bag = kg::loader::aten_schema("_embedding_bag_forward_only.default");
  auto ub = kg::harness::unspecified_outputs(bag, {at::randn({5, 5}), at::zeros({6}, at::kLong), at::zeros({3}, at::kLong)});
  EXPECT_EQ(ub.returns, (std::vector<bool>{false, true, true, true}));
  // Nothing is unspecified for an ordinary op.
  EXPECT_EQ(kg::harness::unspecified_outputs(kg::loader::aten_schema("native_dropout.default"), {at::randn({3}), 0.5, true}).returns,
            (std::vector<bool>{false, false}));
}

TEST(VerdictJudge, AttentionRandomStateAndUnrequestedLogsumexpAreUnspecified) {
  // PyTorch 2.x's schema (libtorch 1.13 has no such op): the dropout seeds are generator state.
  const c10::FunctionSchema sdpa = torch::jit::parseSchema(
      "aten::_scaled_dot_product_efficient_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_bias, "
      "bool compute_log_sumexp, float dropout_p=0.0, bool is_causal=False, *, float? scale=None) -> "
      "(Tensor output, Tensor log_sumexp, Tensor philox_seed, Tensor philox_offset)");
  at::Tensor q = at::randn({1, 2, 4, 8});
  auto without = kg::harness::unspecified_outputs(sdpa, {q, q, q, c10::IValue(), false, 0.0, false});
  EXPECT_EQ(without.returns, (std::vector<bool>{false, true, true, true}));
  auto with = kg::harness::unspecified_outputs(sdpa, {q, q, q, c10::IValue(), true, 0.0, false});
  EXPECT_EQ(with.returns, (std::vector<bool>{false, false, true, true}));
  // Judged: a wrong attention output is still a mismatch; garbage seeds are not.
  std::vector<c10::IValue> in{q, q, q, c10::IValue(), true, 0.0, false};
  at::Tensor o = at::randn({1, 2, 4, 8}), lse = at::randn({1, 2, 4});
  std::vector<c10::IValue> ref{o, lse, at::tensor(int64_t{4121}), at::tensor(int64_t{0})};
  std::vector<c10::IValue> cand{o, lse, at::tensor(int64_t{94}), at::tensor(int64_t{7})};
  EXPECT_TRUE(judge_call(sdpa, in, ref, in, cand, in, strict(), "_scaled_dot_product_efficient_attention.default").empty());
  std::vector<c10::IValue> bad_lse{o, at::zeros({1, 2, 4}), at::tensor(int64_t{94}), at::tensor(int64_t{7})};
  EXPECT_EQ(judge_call(sdpa, in, ref, in, bad_lse, in, strict(), "_scaled_dot_product_efficient_attention.default").size(), 1u);
}

// ---- order-dependent references --------------------------------------------------------------

namespace {

const c10::FunctionSchema& aten_schema(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).schema();
}

// Rows of normal bf16 values, the first one [a, a, -a, -a] with a near bf16's maximum: summed in
// that order it overflows (f32 accumulation included), summed as (a - a) + (a - a) it is 0.
at::Tensor cancelling_rows() {
  at::manual_seed(11);
  at::Tensor x = at::randn({4, 4}).to(at::kBFloat16);
  const float a = 2.0e38f;
  x[0] = at::tensor({a, a, -a, -a}).to(at::kBFloat16);
  return x;
}

}  // namespace

TEST(VerdictCompare, OrderDependentSumAcceptsTheExactResultThere) {
  const auto& schema = aten_schema("aten::sum", "dim_IntList");
  at::Tensor x = cancelling_rows();
  std::vector<c10::IValue> inputs{x, std::vector<int64_t>{1}, false, c10::IValue()}, args = inputs;
  std::vector<c10::IValue> ref = kg::harness::call_reference(schema, args);
  at::Tensor lib = ref[0].toTensor();
  ASSERT_FALSE(std::isfinite(lib[0].item<float>())) << "the library's order overflows";
  auto exact = kg::harness::compute_f64(schema, inputs);
  ASSERT_TRUE(exact);
  // An honest kernel summing pairs of opposite terms first: 0 in the first row, the library's
  // answer elsewhere.
  at::Tensor other_order = lib.clone();
  other_order[0] = 0;
  EXPECT_FALSE(judge_call(schema, inputs, ref, inputs, {other_order}, inputs, strict(), "sum.dim_IntList").empty());
  EXPECT_TRUE(judge_call_either(schema, inputs, ref, *exact, inputs, {other_order}, inputs, strict(), "sum.dim_IntList").empty());
  EXPECT_TRUE(judge_call_either(schema, inputs, ref, *exact, inputs, {lib.clone()}, inputs, strict(), "sum.dim_IntList").empty())
      << "the library's own answer still passes";
  // Wrong where the reference is certain: fails as before, whatever the first row holds.
  at::Tensor wrong_elsewhere = other_order.clone();
  wrong_elsewhere[2] = wrong_elsewhere[2].item<float>() * 1.5f + 1;
  auto m = judge_call_either(schema, inputs, ref, *exact, inputs, {wrong_elsewhere}, inputs, strict(), "sum.dim_IntList");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].category, Category::ValueMismatch) << m[0].detail;
  EXPECT_EQ(m[0].mismatches, 1) << "the excused row is not counted: " << m[0].detail;
  EXPECT_EQ(m[0].first_index, std::vector<int64_t>{2});
  // Neither answer in the uncertain row: still wrong.
  at::Tensor neither = lib.clone();
  neither[0] = 5;
  EXPECT_FALSE(judge_call_either(schema, inputs, ref, *exact, inputs, {neither}, inputs, strict(), "sum.dim_IntList").empty());
}

TEST(VerdictCompare, OrderDependentCumsumOnlyWhereThePrefixesDisagree) {
  const auto& schema = aten_schema("aten::cumsum", "");
  at::Tensor x = cancelling_rows();
  std::vector<c10::IValue> inputs{x, 1, c10::IValue()}, args = inputs;
  std::vector<c10::IValue> ref = kg::harness::call_reference(schema, args);
  auto exact = kg::harness::compute_f64(schema, inputs);
  ASSERT_TRUE(exact);
  at::Tensor lib = ref[0].toTensor();
  at::Tensor rounded = exact->at(0).toTensor().to(at::kBFloat16);
  ASSERT_FALSE(lib[0].equal(rounded[0])) << "the first row's later prefixes depend on the order";
  // The exact prefixes rounded to bf16 (what an f64-accumulating kernel returns) pass.
  EXPECT_FALSE(judge_call(schema, inputs, ref, inputs, {rounded}, inputs, strict(), "cumsum.default").empty());
  EXPECT_TRUE(judge_call_either(schema, inputs, ref, *exact, inputs, {rounded}, inputs, strict(), "cumsum.default").empty());
  // The first prefix is certain (a alone): a wrong value there is not excused.
  at::Tensor wrong_first = rounded.clone();
  wrong_first[0][0] = 1;
  EXPECT_FALSE(judge_call_either(schema, inputs, ref, *exact, inputs, {wrong_first}, inputs, strict(), "cumsum.default").empty());
}

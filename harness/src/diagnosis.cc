// Honest explanations of wrong calls: the entry points the evaluation calls, the helpers every
// class shares, and the dtype classes (a wrong result dtype, a missing type promotion). The
// numeric classes (float64 truth, rounding, uniform relative error) are in diagnosis_rounding.cc.
#include "diagnosis.h"

#include "op_evaluation.h"

#include <ATen/ATen.h>

#include <set>

namespace kg::harness {
namespace {

void flatten(const c10::IValue& v, std::vector<at::Tensor>& out, bool numbers) {
  if (v.isTensor()) out.push_back(v.toTensor());
  else if (v.isTensorList())
    for (const at::Tensor& t : v.toTensorList()) out.push_back(t);
  else if (v.isTuple())
    for (const auto& e : v.toTupleRef().elements()) flatten(e, out, numbers);
  else if (v.isList() && !v.isIntList() && !v.isDoubleList() && !v.isBoolList())
    for (size_t i = 0; i < v.toList().size(); ++i) flatten(v.toList().get(i), out, numbers);
  else if (!numbers) return;
  else if (v.isDouble()) out.push_back(at::scalar_tensor(v.toDouble(), at::kDouble));
  else if (v.isBool()) out.push_back(at::scalar_tensor(v.toBool(), at::kBool));
  else if (v.isInt()) out.push_back(at::scalar_tensor(v.toInt(), at::kLong));
  else out.push_back(at::Tensor());
}

// Equal element for element in value (NaN equal to NaN), in the dtype both promote to.
bool same_values(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || a.sizes() != b.sizes()) return false;
  const auto common = at::promote_types(a.scalar_type(), b.scalar_type());
  at::Tensor x = a.to(common), y = b.to(common);
  if (!c10::isFloatingType(common) && !c10::isComplexType(common)) return at::equal(x, y);
  return (x.eq(y) | (x.isnan() & y.isnan())).all().item<bool>();
}

bool constant(const at::Tensor& t) { return t.numel() >= 2 && same_values(t, t.reshape({-1})[0].expand(t.sizes())); }

bool all_zero(const at::Tensor& t) { return t.numel() >= 2 && t.eq(0).all().item<bool>(); }

// The position of a set `dtype=` argument, or -1.
int dtype_argument(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs) {
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size() && i < inputs.size(); ++i)
    if (args[i].name() == "dtype" && is_dtype_argument(args[i]) && inputs[i].isInt()) return static_cast<int>(i);
  return -1;
}

std::set<c10::ScalarType> input_dtypes(const std::vector<c10::IValue>& inputs) {
  std::set<c10::ScalarType> out;
  for (const at::Tensor& t : input_tensors(inputs))
    if (t.defined()) out.insert(t.scalar_type());
  return out;
}

// Inputs with every tensor (in lists too) copied, those whose dtype promotes into `result` cast
// to `to`.
c10::IValue cast_value(const c10::IValue& v, c10::ScalarType to, c10::ScalarType result) {
  auto cast = [&](const at::Tensor& t) {
    if (!t.defined()) return t;
    const bool promotes = at::promote_types(t.scalar_type(), result) == result;
    return t.to(promotes ? to : t.scalar_type(), /*non_blocking=*/false, /*copy=*/true);
  };
  if (v.isTensor()) return cast(v.toTensor());
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList()) out.push_back(cast(t));
    return out;
  }
  return v;
}

std::vector<c10::IValue> inputs_cast_to(const std::vector<c10::IValue>& inputs, c10::ScalarType to, c10::ScalarType result) {
  std::vector<c10::IValue> out;
  for (const auto& v : inputs) out.push_back(cast_value(v, to, result));
  return out;
}

std::string returns_name(const WrongAnswer& w, size_t i) {
  return flat_tensors(w.ref_returns).size() == 1 ? "result" : "return " + std::to_string(i);
}

// `cand` equal to `value` computed in a narrower dtype: compared in the narrower of the two
// dtypes, with the policy's tolerance for it (exactly for integers and bools).
bool matches(const WrongAnswer& w, const at::Tensor& value, const at::Tensor& cand) {
  if (!value.defined() || !cand.defined()) return value.defined() == cand.defined();
  if (value.sizes() != cand.sizes()) return false;
  const auto v = value.scalar_type(), c = cand.scalar_type();
  const bool both_floating = (c10::isFloatingType(v) || c10::isComplexType(v)) && (c10::isFloatingType(c) || c10::isComplexType(c));
  const auto in = both_floating && at::promote_types(v, c) == c ? v : c;
  return !compare_values(value.to(in), cand.to(in), w.policy, w.op, "");
}

// Whether every return the candidate got wrong equals `alt` (the op computed another way), and
// that equality is no trivial one.
bool wrong_returns_match(const WrongAnswer& w, const std::vector<at::Tensor>& alt) {
  const auto ref = flat_tensors(w.ref_returns), cand = flat_tensors(w.cand_returns);
  if (alt.size() != ref.size() || cand.size() != ref.size()) return false;
  bool any_wrong = false;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!compare_values(ref[i], cand[i], w.policy, w.op, "")) continue;
    any_wrong = true;
    if (!matches(w, alt[i], cand[i])) return false;
  }
  return any_wrong && !trivial_beside(w.inputs, alt, cand);
}

std::optional<std::vector<at::Tensor>> computed(const WrongAnswer& w, std::vector<c10::IValue> inputs) {
  auto r = try_call(w.schema, std::move(inputs));
  if (!r) return std::nullopt;
  return flat_tensors(*r);
}

}  // namespace

bool is_dtype_argument(const c10::Argument& a) {
  c10::TypePtr t = a.real_type();
  if (auto o = t->cast<c10::OptionalType>()) t = o->getElementType();
  return t->kind() == c10::TypeKind::ScalarTypeType;
}

std::vector<at::Tensor> flat_tensors(const std::vector<c10::IValue>& values) {
  std::vector<at::Tensor> out;
  for (const auto& v : values) flatten(v, out, /*numbers=*/true);
  return out;
}

std::vector<at::Tensor> input_tensors(const std::vector<c10::IValue>& inputs) {
  std::vector<at::Tensor> out;
  for (const auto& v : inputs) flatten(v, out, /*numbers=*/false);
  return out;
}

int64_t input_elements(const std::vector<c10::IValue>& inputs) {
  int64_t n = 0;
  for (const at::Tensor& t : input_tensors(inputs)) n += t.defined() ? t.numel() : 0;
  return n;
}

std::optional<std::vector<c10::IValue>> try_call(const c10::FunctionSchema& schema, std::vector<c10::IValue> args) {
  try {
    return call_reference(schema, args);
  } catch (const std::exception&) { return std::nullopt; }
}

bool trivial_beside(const std::vector<c10::IValue>& inputs, const std::vector<at::Tensor>& basis, const std::vector<at::Tensor>& cand) {
  const auto in = input_tensors(inputs);
  for (size_t i = 0; i < cand.size() && i < basis.size(); ++i) {
    const at::Tensor& c = cand[i];
    if (!c.defined() || !basis[i].defined() || c.numel() < 2) continue;
    if (constant(c) && !constant(basis[i])) return true;
    if (all_zero(c) && !all_zero(basis[i])) return true;
    for (const at::Tensor& x : in)
      if (same_values(c, x) && !same_values(basis[i], x)) return true;
  }
  return false;
}

std::optional<std::string> explain_wrong_dtype(const WrongAnswer& w) {
  if (w.mismatch.category != policy::Category::DtypeMismatch) return std::nullopt;
  const auto ref = flat_tensors(w.ref_returns), cand = flat_tensors(w.cand_returns);
  if (ref.size() != cand.size()) return std::nullopt;
  size_t at_i = ref.size();
  for (size_t i = 0; i < ref.size() && at_i == ref.size(); ++i)
    if (ref[i].defined() && cand[i].defined() && ref[i].scalar_type() != cand[i].scalar_type()) at_i = i;
  if (at_i == ref.size()) return std::nullopt;
  const c10::ScalarType expected = ref[at_i].scalar_type(), got = cand[at_i].scalar_type();
  const std::set<c10::ScalarType> in = input_dtypes(w.inputs);
  const int dtype_arg = dtype_argument(w.schema, w.inputs);
  const std::string what = returns_name(w, at_i) + " has dtype " + short_dtype(got) + ", expected " + short_dtype(expected);
  // The values right for the dtype returned: the op computed with the dtype= argument set to it,
  // on the inputs cast to it (a missing promotion), or the reference itself in that dtype.
  if (dtype_arg >= 0) {
    std::vector<c10::IValue> args = loader::clone_values(w.inputs);
    args[dtype_arg] = static_cast<int64_t>(got);
    if (auto alt = computed(w, std::move(args)); alt && wrong_returns_match(w, *alt))
      return what + (in.count(got) ? ": the dtype= argument was ignored" : "");
  }
  if (in.count(got) && in.size() > 1)
    if (auto alt = computed(w, inputs_cast_to(w.inputs, got, expected)); alt && wrong_returns_match(w, *alt))
      return what + ": matches " + w.schema.name().substr(w.schema.name().rfind(':') + 1) + " computed in " + short_dtype(got) +
             ": missing type promotion";
  if (!wrong_returns_match(w, ref)) return std::nullopt;
  if (dtype_arg >= 0 && in.count(got)) return what + ": the dtype= argument was ignored";
  if (in.count(got)) return what + ": returned the input's dtype";
  return what;
}

std::optional<std::string> explain_missing_promotion(const WrongAnswer& w) {
  if (w.mismatch.category == policy::Category::ShapeMismatch || w.mismatch.category == policy::Category::InputMutated ||
      w.mismatch.category == policy::Category::DtypeMismatch)
    return std::nullopt;
  const std::set<c10::ScalarType> in = input_dtypes(w.inputs);
  if (in.size() < 2) return std::nullopt;
  const auto ref = flat_tensors(w.ref_returns);
  size_t at_i = 0;
  while (at_i < ref.size() && !ref[at_i].defined()) ++at_i;
  if (at_i == ref.size()) return std::nullopt;
  const c10::ScalarType expected = ref[at_i].scalar_type();
  for (c10::ScalarType narrow : in) {
    if (narrow == expected || at::promote_types(narrow, expected) != expected) continue;
    auto alt = computed(w, inputs_cast_to(w.inputs, narrow, expected));
    if (alt && wrong_returns_match(w, *alt))
      return "matches " + w.schema.name().substr(w.schema.name().rfind(':') + 1) + " computed in " + short_dtype(narrow) +
             ": missing type promotion (expected " + short_dtype(expected) + ")";
  }
  return std::nullopt;
}

std::optional<std::string> diagnose_wrong_answer(const WrongAnswer& w) {
  if (w.mismatch.category == policy::Category::InputMutated || w.mismatch.category == policy::Category::ShapeMismatch) return std::nullopt;
  if (input_elements(w.inputs) > kMaxRecomputedNumel) return std::nullopt;
  for (auto explain : {explain_wrong_dtype, explain_missing_promotion, explain_rounding, explain_uniform_relative_error})
    if (auto why = explain(w)) return why;
  return std::nullopt;
}

}  // namespace kg::harness

namespace kg::harness::evaluation {

std::optional<std::vector<c10::IValue>> reference_f64(const OpState& op, const std::vector<c10::IValue>& inputs) {
  return compute_f64(*op.schema, inputs);
}

std::optional<std::string> honest_explanation(const OpState& op, const Judged& j, const std::vector<c10::IValue>& cand_returns,
                                              const Mismatch& m) {
  try {
    return diagnose_wrong_answer({*op.schema, op.folder.op, op.policy, j.inputs, j.ref_returns, cand_returns, m});
  } catch (const std::exception&) { return std::nullopt; }  // a diagnosis that cannot be made explains nothing
}

}  // namespace kg::harness::evaluation

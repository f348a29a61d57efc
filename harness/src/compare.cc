// What "correct" means: BackendBench's compare, then stricter. dtype and shape first, then NaN
// positions, then +-inf positions and signs, then allclose with the policy's per-dtype
// tolerance; integers and bools exact. Every mismatch carries evidence.
#include "kernelgate/harness.h"

#include "compare_pass.h"
#include "util.h"
#include "kernelgate/catalogue.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace kg::harness {
namespace {

using policy::Category;

std::vector<int64_t> unravel(int64_t flat, at::IntArrayRef sizes) {
  std::vector<int64_t> idx(sizes.size());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    int64_t s = sizes[d] > 0 ? sizes[d] : 1;
    idx[d] = flat % s;
    flat /= s;
  }
  return idx;
}

std::string fmt_index(const std::vector<int64_t>& idx) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < idx.size(); ++i) o << (i ? ", " : "") << idx[i];
  o << "]";
  return o.str();
}

std::string fmt_num(double v) {
  std::ostringstream o;
  o.precision(9);
  o << v;
  return o.str();
}

std::string shape_str(at::IntArrayRef s) {
  std::vector<int64_t> v(s.begin(), s.end());
  return fmt_index(v);
}

// Ordered integer image of a float's bits, so ULP distance is a subtraction: floats are
// sign-magnitude, so a pattern with the sign bit set maps to minus its magnitude.
at::Tensor ordered_bits(const at::Tensor& t) {
  at::ScalarType it = at::kLong;
  int64_t magnitude_mask = std::numeric_limits<int64_t>::max();
  if (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16) {
    it = at::kShort;
    magnitude_mask = 0x7fff;
  } else if (t.scalar_type() == at::kFloat) {
    it = at::kInt;
    magnitude_mask = 0x7fffffff;
  }
  at::Tensor bits = t.contiguous().view(it).to(at::kLong);  // sign-extended
  return at::where(bits < 0, -(bits.bitwise_and(magnitude_mask)), bits);
}

Mismatch make(policy::Category cat, const std::string& where, const at::Tensor& mask, const at::Tensor& e, const at::Tensor& a,
              const std::string& what) {
  Mismatch m;
  m.category = cat;
  m.where = where;
  m.numel = e.numel();
  at::Tensor flat = mask.reshape({-1});
  m.mismatches = flat.sum().item<int64_t>();
  if (m.mismatches > 0) {
    int64_t first = flat.nonzero().select(1, 0)[0].item<int64_t>();
    m.first_index = unravel(first, e.sizes());
    m.expected = e.reshape({-1})[first].item<double>();
    m.actual = a.reshape({-1})[first].item<double>();
  }
  std::ostringstream o;
  o << policy::category_id(cat) << " in " << where << ": " << m.mismatches << " of " << m.numel << " elements ("
    << fmt_num(100.0 * m.mismatches / std::max<int64_t>(1, m.numel)) << "%) " << what;
  if (m.mismatches > 0)
    o << "; first at " << fmt_index(m.first_index) << " (expected " << fmt_num(m.expected) << ", got " << fmt_num(m.actual) << ")";
  m.detail = o.str();
  return m;
}

// `any_nonfinite`: positions where both sides are non-finite agree whatever NaN or infinity each
// holds (contractions: which one comes out depends on skipped zero operands and summation order).
std::optional<Mismatch> compare_real(const at::Tensor& e0, const at::Tensor& a0, const policy::Tolerance& tol, const std::string& where,
                                     c10::ScalarType orig, bool any_nonfinite) {
  if (std::optional<bool> pass = all_elements_pass(e0, a0, tol, any_nonfinite); pass && *pass) return std::nullopt;
  at::Tensor e = e0.to(at::kDouble), a = a0.to(at::kDouble);
  at::Tensor en = e.isnan(), an = a.isnan();
  at::Tensor ei = e.isinf(), ai = a.isinf();
  at::Tensor differ = any_nonfinite ? (e.isfinite() | a.isfinite()) : at::ones_like(en);
  at::Tensor nan_diff = en.ne(an) & differ;
  if (nan_diff.any().item<bool>()) return make(Category::NanMask, where, nan_diff, e, a, "differ in NaN positions");
  at::Tensor inf_diff = (ei | ai) & e.ne(a) & differ;
  if (inf_diff.any().item<bool>()) return make(Category::InfMask, where, inf_diff, e, a, "differ in +-inf positions or signs");
  at::Tensor finite = (~en) & (~ei);
  at::Tensor ez = at::where(finite, e, at::zeros_like(e)), az = at::where(finite, a, at::zeros_like(a));
  at::Tensor abs_err = (az - ez).abs();
  at::Tensor bad = abs_err > (tol.atol + tol.rtol * ez.abs());
  if (!bad.any().item<bool>()) return std::nullopt;
  std::ostringstream what;
  what << "differ beyond atol=" << fmt_num(tol.atol) << " rtol=" << fmt_num(tol.rtol);
  Mismatch m = make(Category::ValueMismatch, where, bad, e, a, what.str());
  m.max_abs_err = abs_err.max().item<double>();
  m.max_rel_err = (abs_err / ez.abs().clamp_min(std::numeric_limits<double>::min())).masked_fill(abs_err.eq(0), 0).max().item<double>();
  if (orig == at::kHalf || orig == at::kBFloat16 || orig == at::kFloat || orig == at::kDouble) {
    at::Tensor eb = ordered_bits(e0.to(orig)), ab = ordered_bits(a0.to(orig));
    at::Tensor ulp = (eb - ab).abs().to(at::kDouble);
    m.max_ulp = at::where(finite, ulp, at::zeros_like(ulp)).max().item<double>();
  }
  m.detail += "; max abs err " + fmt_num(m.max_abs_err) + ", max rel err " + fmt_num(m.max_rel_err);
  if (m.max_ulp > 0) m.detail += ", max " + fmt_num(m.max_ulp) + " ulp";
  return m;
}

std::optional<Mismatch> compare_tensors(const at::Tensor& e, const at::Tensor& a, const policy::Policy& policy, const std::string& op,
                                        const std::string& where) {
  if (!e.defined() || !a.defined()) {
    if (e.defined() == a.defined()) return std::nullopt;
    Mismatch m;
    m.category = Category::ShapeMismatch;
    m.where = where;
    m.detail = std::string("shape_mismatch in ") + where + ": expected " + (e.defined() ? "a tensor" : "an undefined tensor") + ", got " +
               (a.defined() ? "a tensor" : "an undefined tensor");
    return m;
  }
  if (e.scalar_type() != a.scalar_type()) {
    Mismatch m;
    m.category = Category::DtypeMismatch;
    m.where = where;
    m.detail = "dtype_mismatch in " + where + ": expected " + short_dtype(e.scalar_type()) + ", got " + short_dtype(a.scalar_type());
    return m;
  }
  if (e.sizes() != a.sizes()) {
    Mismatch m;
    m.category = Category::ShapeMismatch;
    m.where = where;
    m.detail = "shape_mismatch in " + where + ": expected " + shape_str(e.sizes()) + ", got " + shape_str(a.sizes());
    return m;
  }
  if (e.numel() == 0) return std::nullopt;
  const auto st = e.scalar_type();
  if (c10::isIntegralType(st, /*includeBool=*/true)) {
    if (same_bytes(e, a)) return std::nullopt;
    at::Tensor ec = e.to(at::kLong), ac = a.to(at::kLong);
    at::Tensor bad = ec.ne(ac);
    if (!bad.any().item<bool>()) return std::nullopt;
    Mismatch m = make(Category::ValueMismatch, where, bad, ec.to(at::kDouble), ac.to(at::kDouble),
                      "differ (integers and bools are compared exactly)");
    m.max_abs_err = (ec - ac).abs().max().item<int64_t>();
    return m;
  }
  policy::Tolerance tol = policy.tolerance_for(op, short_dtype(st));
  if (c10::isComplexType(st)) {
    at::Tensor er = at::view_as_real(e.resolve_conj()), ar = at::view_as_real(a.resolve_conj());
    c10::ScalarType part = st == at::kComplexDouble ? at::kDouble : at::kFloat;
    return compare_real(er, ar, tol, where + " (real/imag parts, last index)", part, is_contraction(op));
  }
  return compare_real(e, a, tol, where, st, is_contraction(op));
}

// Per element, whether `a` passes against `e` by compare_real's rules (the same order of checks,
// folded into one mask).
at::Tensor elements_pass(const at::Tensor& e0, const at::Tensor& a0, const policy::Tolerance& tol, bool any_nonfinite) {
  at::Tensor e = e0.to(at::kDouble), a = a0.to(at::kDouble);
  at::Tensor both_finite = e.isfinite() & a.isfinite();
  at::Tensor close = (a - e).abs() <= (tol.atol + tol.rtol * e.abs());
  at::Tensor same_nonfinite = (e.isnan() & a.isnan()) | (e.isinf() & a.isinf() & e.eq(a));
  at::Tensor ok = (both_finite & close) | same_nonfinite;
  if (any_nonfinite) ok |= ~e.isfinite() & ~a.isfinite();
  return ok;
}

// `a` with its elements where the reference is uncertain and `a` matches the exact result set to
// the reference's: at the elements where `e` and `alt` (the exact result, rounded here to e's
// dtype) disagree, `a` may match either; everywhere else it is judged against `e` as before.
// Nothing when `alt` does not line up (then `a` is judged as it is).
std::optional<at::Tensor> excused(const at::Tensor& e, const at::Tensor& alt, const at::Tensor& a, const policy::Policy& policy,
                                  const std::string& op) {
  const auto st = e.scalar_type();
  if (!alt.defined() || alt.sizes() != e.sizes() || a.scalar_type() != st || a.sizes() != e.sizes()) return std::nullopt;
  if (!c10::isFloatingType(st) || !c10::isFloatingType(alt.scalar_type())) return std::nullopt;
  const policy::Tolerance tol = policy.tolerance_for(op, short_dtype(st));
  const at::Tensor rounded = alt.to(st);
  const bool contraction = is_contraction(op);
  at::Tensor uncertain = ~elements_pass(e, rounded, tol, contraction);
  at::Tensor take_reference = uncertain & elements_pass(rounded, a, tol, contraction);
  return at::where(take_reference, e, a);
}

bool passes_either(const at::Tensor& e, const at::Tensor& alt, const at::Tensor& a, const policy::Policy& policy, const std::string& op) {
  std::optional<at::Tensor> patched = excused(e, alt, a, policy, op);
  return patched && !compare_values(e, *patched, policy, op, "");
}

bool values_pass_either(const c10::IValue& e, const c10::IValue& alt, const c10::IValue& a, const policy::Policy& policy,
                        const std::string& op) {
  if (!compare_values(e, a, policy, op, "")) return true;
  if (e.isTensor() && alt.isTensor() && a.isTensor()) return passes_either(e.toTensor(), alt.toTensor(), a.toTensor(), policy, op);
  if (e.isTuple() && alt.isTuple() && a.isTuple()) {
    const auto &ev = e.toTupleRef().elements(), &altv = alt.toTupleRef().elements(), &av = a.toTupleRef().elements();
    if (ev.size() != altv.size() || ev.size() != av.size()) return false;
    for (size_t i = 0; i < ev.size(); ++i)
      if (!values_pass_either(ev[i], altv[i], av[i], policy, op)) return false;
    return true;
  }
  if (e.isTensorList() && alt.isTensorList() && a.isTensorList()) {
    auto ev = e.toTensorList(), altv = alt.toTensorList(), av = a.toTensorList();
    if (ev.size() != altv.size() || ev.size() != av.size()) return false;
    for (size_t i = 0; i < ev.size(); ++i)
      if (!values_pass_either(ev.get(i), altv.get(i), av.get(i), policy, op)) return false;
    return true;
  }
  return false;
}

}  // namespace

std::optional<Mismatch> compare_values(const c10::IValue& expected, const c10::IValue& actual, const policy::Policy& policy,
                                       const std::string& op, const std::string& where) {
  auto kind_mismatch = [&](const std::string& what) {
    Mismatch m;
    m.category = Category::DtypeMismatch;
    m.where = where;
    m.detail = "dtype_mismatch in " + where + ": " + what;
    return m;
  };
  if (expected.isTensor()) {
    if (!actual.isTensor()) return kind_mismatch(std::string("expected a tensor, got ") + actual.tagKind());
    return compare_tensors(expected.toTensor(), actual.toTensor(), policy, op, where);
  }
  if (expected.isTensorList() || expected.isTuple() || expected.isList()) {
    std::vector<c10::IValue> ev, av;
    auto elems = [](const c10::IValue& v, std::vector<c10::IValue>* out) {
      if (v.isTuple()) {
        for (const auto& x : v.toTupleRef().elements()) out->push_back(x);
      } else if (v.isTensorList()) {
        for (const at::Tensor& t : v.toTensorList()) out->push_back(t);
      } else if (v.isList()) {
        auto l = v.toList();
        for (size_t i = 0; i < l.size(); ++i) out->push_back(l.get(i));
      } else {
        return false;
      }
      return true;
    };
    elems(expected, &ev);
    if (!elems(actual, &av)) return kind_mismatch(std::string("expected a sequence, got ") + actual.tagKind());
    if (ev.size() != av.size()) {
      Mismatch m;
      m.category = Category::ShapeMismatch;
      m.where = where;
      m.detail = "shape_mismatch in " + where + ": expected " + std::to_string(ev.size()) + " elements, got " + std::to_string(av.size());
      return m;
    }
    for (size_t i = 0; i < ev.size(); ++i)
      if (auto m = compare_values(ev[i], av[i], policy, op, where + "[" + std::to_string(i) + "]")) return m;
    return std::nullopt;
  }
  if (expected.isNone()) {
    if (actual.isNone()) return std::nullopt;
    return kind_mismatch(std::string("expected None, got ") + actual.tagKind());
  }
  if (expected.isInt() || expected.isBool()) {
    if (actual.tagKind() != expected.tagKind())
      return kind_mismatch(std::string("expected ") + expected.tagKind() + ", got " + actual.tagKind());
    if (expected == actual) return std::nullopt;
    Mismatch m;
    m.category = Category::ValueMismatch;
    m.where = where;
    m.detail = "value_mismatch in " + where + ": expected " + fmt_num(expected.isInt() ? expected.toInt() : expected.toBool()) + ", got " +
               fmt_num(actual.isInt() ? actual.toInt() : actual.toBool());
    return m;
  }
  if (expected.isDouble()) {
    if (!actual.isDouble()) return kind_mismatch(std::string("expected a float, got ") + actual.tagKind());
    return compare_tensors(at::scalar_tensor(expected.toDouble(), at::kDouble), at::scalar_tensor(actual.toDouble(), at::kDouble), policy,
                           op, where);
  }
  return kind_mismatch(std::string("cannot compare values of kind ") + expected.tagKind());
}

std::optional<Mismatch> compare_exact(const c10::IValue& before, const c10::IValue& after, const std::string& where) {
  auto tensors = [](const c10::IValue& v) {
    std::vector<at::Tensor> out;
    if (v.isTensor()) out.push_back(v.toTensor());
    else if (v.isTensorList())
      for (const at::Tensor& t : v.toTensorList()) out.push_back(t);
    else if (v.isList())
      for (size_t i = 0; i < v.toList().size(); ++i) {
        c10::IValue e = v.toList().get(i);
        if (e.isTensor()) out.push_back(e.toTensor());
      }
    return out;
  };
  auto b = tensors(before), a = tensors(after);
  if (b.size() != a.size()) {
    Mismatch m;
    m.category = Category::InputMutated;
    m.where = where;
    m.detail = "input_mutated: " + where + " changed its number of tensors";
    return m;
  }
  for (size_t i = 0; i < b.size(); ++i) {
    const at::Tensor& x = b[i];
    const at::Tensor& y = a[i];
    if (!x.defined() || !y.defined()) {
      if (x.defined() != y.defined()) {
        Mismatch m;
        m.category = Category::InputMutated;
        m.where = where;
        m.detail = "input_mutated: " + where + " changed definedness";
        return m;
      }
      continue;
    }
    if (x.scalar_type() != y.scalar_type() || x.sizes() != y.sizes()) {
      Mismatch m;
      m.category = Category::InputMutated;
      m.where = where;
      m.detail = "input_mutated: " + where + " changed from " + short_dtype(x.scalar_type()) + shape_str(x.sizes()) + " to " +
                 short_dtype(y.scalar_type()) + shape_str(y.sizes());
      return m;
    }
    at::Tensor xc = x.contiguous(), yc = y.contiguous();
    const size_t n = static_cast<size_t>(xc.numel()) * xc.element_size();
    if (n == 0 || std::memcmp(xc.data_ptr(), yc.data_ptr(), n) == 0) continue;
    // Element-wise difference of the bytes, for the evidence.
    at::Tensor xb = xc.view({-1}).view(at::kByte).view({xc.numel(), static_cast<int64_t>(xc.element_size())});
    at::Tensor yb = yc.view({-1}).view(at::kByte).view({yc.numel(), static_cast<int64_t>(yc.element_size())});
    at::Tensor bad = xb.ne(yb).any(1).view(x.sizes());
    at::Tensor xd = c10::isComplexType(x.scalar_type()) ? at::real(xc).to(at::kDouble) : xc.to(at::kDouble);
    at::Tensor yd = c10::isComplexType(y.scalar_type()) ? at::real(yc).to(at::kDouble) : yc.to(at::kDouble);
    return make(Category::InputMutated, where + (b.size() > 1 ? "[" + std::to_string(i) + "]" : ""), bad, xd, yd,
                "changed although the op's schema does not let it write this argument");
  }
  return std::nullopt;
}

namespace {

// compare_values against a reference that may be uncertain (`alt`: the exact result): a tensor's
// mismatch names only the elements no answer excuses.
std::optional<Mismatch> compare_either(const c10::IValue& e, const c10::IValue* alt, const c10::IValue& a, const policy::Policy& policy,
                                       const std::string& op, const std::string& where) {
  std::optional<Mismatch> m = compare_values(e, a, policy, op, where);
  if (!m || !alt) return m;
  if (e.isTensor() && alt->isTensor() && a.isTensor() && e.toTensor().defined()) {
    std::optional<at::Tensor> patched = excused(e.toTensor(), alt->toTensor(), a.toTensor(), policy, op);
    return patched ? compare_values(e, *patched, policy, op, where) : m;
  }
  return values_pass_either(e, *alt, a, policy, op) ? std::nullopt : m;
}

// The return a written argument is (the same alias set: `self(a!)` and `-> Tensor(a!)`), or -1.
int return_of_written_arg(const c10::FunctionSchema& schema, size_t arg) {
  const auto* info = schema.arguments()[arg].alias_info();
  if (!info) return -1;
  for (size_t r = 0; r < schema.returns().size(); ++r) {
    const auto* ri = schema.returns()[r].alias_info();
    if (ri && ri->isWrite() && ri->beforeSets() == info->beforeSets()) return static_cast<int>(r);
  }
  return -1;
}

std::vector<Mismatch> judge_call_against(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs_before,
                                         const std::vector<c10::IValue>& ref_returns, const std::vector<c10::IValue>* alt_returns,
                                         const std::vector<c10::IValue>& ref_args_after, const std::vector<c10::IValue>& cand_returns,
                                         const std::vector<c10::IValue>& cand_args_after, const policy::Policy& policy,
                                         const std::string& op) {
  std::vector<Mismatch> out;
  const UnspecifiedOutputs unspecified = unspecified_outputs(schema, inputs_before);
  auto alt_of = [&](int r) -> const c10::IValue* {
    return alt_returns && r >= 0 && static_cast<size_t>(r) < alt_returns->size() ? &(*alt_returns)[r] : nullptr;
  };
  for (size_t i = 0; i < ref_returns.size() && i < cand_returns.size(); ++i) {
    if (i < unspecified.returns.size() && unspecified.returns[i]) continue;
    std::string where = ref_returns.size() == 1 ? "the return value" : "return " + std::to_string(i);
    if (auto m = compare_either(ref_returns[i], alt_of(static_cast<int>(i)), cand_returns[i], policy, op, where)) out.push_back(*m);
  }
  const auto& args = schema.arguments();
  for (size_t j = 0; j < args.size() && j < cand_args_after.size() && j < inputs_before.size(); ++j) {
    const bool written = writes_argument(args[j]);
    const std::string where = "argument '" + args[j].name() + "'";
    if (written) {
      if (unspecified.args[j]) continue;
      if (auto m = compare_either(ref_args_after[j], alt_of(return_of_written_arg(schema, j)), cand_args_after[j], policy, op,
                                  where + " (written by the op)"))
        out.push_back(*m);
    } else if (auto m = compare_exact(inputs_before[j], cand_args_after[j], where)) {
      out.push_back(*m);
    }
  }
  return out;
}

}  // namespace

std::vector<Mismatch> judge_call(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs_before,
                                 const std::vector<c10::IValue>& ref_returns, const std::vector<c10::IValue>& ref_args_after,
                                 const std::vector<c10::IValue>& cand_returns, const std::vector<c10::IValue>& cand_args_after,
                                 const policy::Policy& policy, const std::string& op) {
  return judge_call_against(schema, inputs_before, ref_returns, nullptr, ref_args_after, cand_returns, cand_args_after, policy, op);
}

std::vector<Mismatch> judge_call_either(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs_before,
                                        const std::vector<c10::IValue>& ref_returns, const std::vector<c10::IValue>& exact_returns,
                                        const std::vector<c10::IValue>& ref_args_after, const std::vector<c10::IValue>& cand_returns,
                                        const std::vector<c10::IValue>& cand_args_after, const policy::Policy& policy,
                                        const std::string& op) {
  return judge_call_against(schema, inputs_before, ref_returns, &exact_returns, ref_args_after, cand_returns, cand_args_after, policy, op);
}

}  // namespace kg::harness

// The numeric classes of honest mistake: the op's float64 truth, an error of the size ordinary
// rounding makes (the library's own, or a K-term sum's bound), and a small relative error spread
// evenly over the elements (imprecise arithmetic).
#include "diagnosis.h"

#include "kernelgate/names.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace kg::harness {
namespace {

c10::ScalarType widened(c10::ScalarType t) {
  if (c10::isComplexType(t)) return at::kComplexDouble;
  if (c10::isFloatingType(t)) return at::kDouble;
  return t;
}

// A copy of `v` on the CPU, floating tensors widened; `*widened_any` set when one was.
c10::IValue upcast(const c10::IValue& v, bool* widened_any) {
  auto up = [&](const at::Tensor& t) {
    if (!t.defined()) return t;
    const auto to = widened(t.scalar_type());
    *widened_any |= to != t.scalar_type();
    return t.to(at::kCPU, to, /*non_blocking=*/false, /*copy=*/true);
  };
  if (v.isTensor()) return up(v.toTensor());
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList()) out.push_back(up(t));
    return out;
  }
  if (v.isList() && !v.isIntList() && !v.isDoubleList() && !v.isBoolList()) {
    auto l = v.toList();
    c10::impl::GenericList out(l.elementType());
    for (size_t i = 0; i < l.size(); ++i) out.push_back(upcast(l.get(i), widened_any));
    return out;
  }
  if (v.isDevice()) return c10::Device(at::kCPU);
  return v;
}

std::vector<c10::IValue> upcast_inputs(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs, bool* widened_any) {
  std::vector<c10::IValue> out;
  const auto& args = schema.arguments();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const c10::IValue& v = inputs[i];
    if (i < args.size() && is_dtype_argument(args[i]) && v.isInt()) {
      const auto to = widened(static_cast<c10::ScalarType>(v.toInt()));
      *widened_any |= to != static_cast<c10::ScalarType>(v.toInt());
      out.push_back(static_cast<int64_t>(to));
    } else if (i < args.size() && args[i].name() == "half_to_float" && v.isBool()) {
      out.push_back(false);  // softmax's f16-to-f32 switch, which f64 inputs reject
    } else {
      out.push_back(upcast(v, widened_any));
    }
  }
  return out;
}

// Unit roundoff of a floating dtype (of its real part for complex ones).
double unit_roundoff(c10::ScalarType t) {
  switch (t) {
    case at::kHalf: return std::ldexp(1.0, -11);
    case at::kBFloat16: return std::ldexp(1.0, -8);
    case at::kDouble:
    case at::kComplexDouble: return std::ldexp(1.0, -53);
    default: return std::ldexp(1.0, -24);
  }
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

// Sums and sums of products: ops whose every output is a sum of K terms, each one entry of every
// floating input multiplied (so that the op on squared inputs gives the sum of squared terms).
bool is_sum_of_terms(const std::string& op) {
  static const std::set<std::string> sums = {"sum", "nansum", "cumsum"};
  const auto name = names::OpName::try_parse(op);
  return is_contraction(op) || (name && sums.count(name->base()));
}

// The f64 inputs with every floating tensor replaced by `f(t, argument name)`.
template <class F>
std::optional<at::Tensor> f64_of_mapped(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& f64_inputs, size_t ret, F f) {
  std::vector<c10::IValue> args;
  const auto& names = schema.arguments();
  for (size_t i = 0; i < f64_inputs.size(); ++i) {
    const c10::IValue& v = f64_inputs[i];
    if (v.isTensor() && v.toTensor().defined() && v.toTensor().scalar_type() == at::kDouble)
      args.push_back(f(v.toTensor(), i < names.size() ? names[i].name() : ""));
    else args.push_back(v);
  }
  auto r = try_call(schema, std::move(args));
  if (!r) return std::nullopt;
  auto ts = flat_tensors(*r);
  if (ret >= ts.size() || !ts[ret].defined()) return std::nullopt;
  return ts[ret].to(at::kDouble);
}

// What a sum of K terms in the result's dtype (unit roundoff u) may honestly be off by, per
// element, in any summation order. The worst honest order is sequential: its partial sums S_k have
// sum of squares about K (q^2/2 + t^2/3) (t the exact sum, q the root of the sum of the squared
// terms), each addition rounds by at most u of S_k (rms u/sqrt(3)), and the roundings add up like
// a random walk. The bound is (4 + sqrt(2 ln N)) times that walk's rms (N outputs: the largest of
// N normal deviates stays under it), plus the products' and the final rounding. Dropping terms or
// rounding the inputs to bf16 costs more, up to K ~ 10^8 (beyond kMaxRecomputedNumel).
struct SumBound {
  at::Tensor bound;
  int64_t k = 0;  // the largest K
};

// K per element: the op on ones, a bias (which adds no term to the sum) zeroed.
std::optional<at::Tensor> terms_per_element(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& f64_inputs, size_t ret) {
  const std::string base = schema.name().substr(schema.name().rfind(':') + 1);
  const bool bias_first = base.rfind("add", 0) == 0 || base.rfind("baddbmm", 0) == 0 || base == "_addmm_activation";
  bool first = true;
  auto ones = f64_of_mapped(schema, f64_inputs, ret, [&](const at::Tensor& t, const std::string& name) {
    const bool bias = name == "bias" || (bias_first && first);
    first = false;
    return bias ? at::zeros_like(t) : at::ones_like(t);
  });
  if (!ones) return std::nullopt;
  return ones->abs();
}

int64_t summed_length(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& f64_inputs, size_t ret) {
  auto k = terms_per_element(schema, f64_inputs, ret);
  return k && k->numel() ? static_cast<int64_t>(std::llround(k->max().item<double>())) : 0;
}

std::optional<SumBound> sum_bound(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& f64_inputs, size_t ret, double u,
                                  const at::Tensor& truth) {
  auto k = terms_per_element(schema, f64_inputs, ret);
  auto squares = f64_of_mapped(schema, f64_inputs, ret, [](const at::Tensor& t, const std::string&) { return t * t; });
  if (!k || !squares || k->sizes() != truth.sizes() || squares->sizes() != truth.sizes() || !k->numel()) return std::nullopt;
  SumBound b;
  b.k = static_cast<int64_t>(std::llround(k->max().item<double>()));
  if (b.k < 2) return std::nullopt;
  const at::Tensor t = truth.abs().nan_to_num(0, 0, 0), q = squares->clamp_min(0).sqrt();
  const double spread = 4 + std::sqrt(2 * std::log(static_cast<double>(std::max<int64_t>(truth.numel(), 1))));
  const at::Tensor walk = (k->clamp_min(1) * (q * q / 2 + t * t / 3)).sqrt() * (u / std::sqrt(3.0));
  b.bound = spread * walk + u * (q + t);
  return b;
}

// One wrong return, as the numeric classes measure it: the finite elements of the reference,
// and whether the other elements agree with it.
struct Measured {
  at::Tensor ref, cand, finite;
  bool nonfinite_agree = false;
};

Measured measure(const at::Tensor& ref, const at::Tensor& cand) {
  Measured m;
  const bool complex = c10::isComplexType(ref.scalar_type());
  m.ref = (complex ? at::view_as_real(ref.resolve_conj()) : ref).to(at::kDouble);
  m.cand = (complex ? at::view_as_real(cand.resolve_conj()) : cand).to(at::kDouble);
  m.finite = m.ref.isfinite() & m.cand.isfinite();
  at::Tensor agree = m.ref.eq(m.cand) | (m.ref.isnan() & m.cand.isnan());
  m.nonfinite_agree = (m.finite | agree).all().item<bool>();
  return m;
}

// The wrong floating returns, in order, with their index; nothing when a wrong return is not
// floating or does not line up with the reference.
std::optional<std::vector<std::pair<size_t, Measured>>> wrong_floating_returns(const WrongAnswer& w) {
  const auto ref = flat_tensors(w.ref_returns), cand = flat_tensors(w.cand_returns);
  if (ref.size() != cand.size()) return std::nullopt;
  std::vector<std::pair<size_t, Measured>> out;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!compare_values(ref[i], cand[i], w.policy, w.op, "")) continue;
    const auto t = ref[i].defined() ? ref[i].scalar_type() : at::kLong;
    if (!cand[i].defined() || cand[i].scalar_type() != t || cand[i].sizes() != ref[i].sizes()) return std::nullopt;
    if (!c10::isFloatingType(t) && !c10::isComplexType(t)) return std::nullopt;
    out.emplace_back(i, measure(ref[i], cand[i]));
    if (!out.back().second.nonfinite_agree) return std::nullopt;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

double masked_max(const at::Tensor& x, const at::Tensor& mask) {
  at::Tensor v = x.masked_select(mask);
  return v.numel() ? v.max().item<double>() : 0.0;
}

// Multiply-adds of a sum of products, sqrt(|A| |B| |out|) for its two largest operands (M K N for
// a matrix product), the output's size from the op on meta tensors; 0 for other ops.
double estimated_products(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs) {
  const std::string op = schema.name() + "." + (schema.overload_name().empty() ? "default" : schema.overload_name());
  if (!is_contraction(op)) return 0;
  std::vector<double> sizes;
  for (const at::Tensor& t : input_tensors(inputs))
    if (t.defined()) sizes.push_back(static_cast<double>(t.numel()));
  std::sort(sizes.rbegin(), sizes.rend());
  if (sizes.size() < 2) return 0;
  double out = sizes[0];  // when the op has no meta kernel
  std::vector<c10::IValue> meta;
  for (const c10::IValue& v : inputs) {
    if (v.isTensorList()) {
      std::vector<at::Tensor> list;
      for (const at::Tensor& t : v.toTensorList()) list.push_back(t.to(at::kMeta));
      meta.push_back(list);
    } else {
      meta.push_back(v.isTensor() && v.toTensor().defined() ? c10::IValue(v.toTensor().to(at::kMeta)) : v);
    }
  }
  if (auto r = try_call(schema, std::move(meta))) {
    out = 0;
    for (const at::Tensor& t : flat_tensors(*r)) out += t.defined() ? static_cast<double>(t.numel()) : 0;
  }
  return std::sqrt(sizes[0] * sizes[1] * out);
}

}  // namespace

std::optional<std::vector<c10::IValue>> compute_f64(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs) {
  if (input_elements(inputs) > kMaxRecomputedNumel || estimated_products(schema, inputs) > kMaxRecomputedProducts) return std::nullopt;
  bool widened_any = false;
  std::vector<c10::IValue> args = upcast_inputs(schema, inputs, &widened_any);
  if (!widened_any) return std::nullopt;
  return try_call(schema, std::move(args));
}

std::optional<std::string> explain_rounding(const WrongAnswer& w) {
  if (w.mismatch.category != policy::Category::ValueMismatch) return std::nullopt;
  auto wrong = wrong_floating_returns(w);
  if (!wrong) return std::nullopt;
  bool widened_any = false;
  const std::vector<c10::IValue> f64_inputs = upcast_inputs(w.schema, w.inputs, &widened_any);
  auto truth_returns = compute_f64(w.schema, w.inputs);
  if (!truth_returns || trivial_beside(w.inputs, flat_tensors(w.ref_returns), flat_tensors(w.cand_returns))) return std::nullopt;
  const auto truth = flat_tensors(*truth_returns);
  const bool sum_of_terms = is_sum_of_terms(w.op);
  double worst_cand = 0, worst_lib = 0;
  int64_t k = 0;
  c10::ScalarType dtype = at::kFloat;
  for (auto& [i, m] : *wrong) {
    if (i >= truth.size() || !truth[i].defined()) return std::nullopt;
    dtype = flat_tensors(w.ref_returns)[i].scalar_type();
    at::Tensor t = c10::isComplexType(truth[i].scalar_type()) ? at::view_as_real(truth[i].resolve_conj()) : truth[i].to(at::kDouble);
    if (t.sizes() != m.ref.sizes()) return std::nullopt;
    at::Tensor mask = m.finite & t.isfinite();
    at::Tensor cand_err = (m.cand - t).abs(), lib_err = (m.ref - t).abs();
    const double c = masked_max(cand_err, mask), l = masked_max(lib_err, mask);
    worst_cand = std::max(worst_cand, c);
    worst_lib = std::max(worst_lib, l);
    // Of the size of the library's own rounding at every element, or within a few units in the
    // last place of the exact result.
    const double u = unit_roundoff(dtype);
    if (!(cand_err > 8 * lib_err + 16 * u * t.abs()).logical_and(mask).any().item<bool>()) continue;
    std::optional<SumBound> b = sum_of_terms && !c10::isComplexType(dtype) ? sum_bound(w.schema, f64_inputs, i, u, t) : std::nullopt;
    if (!b || (cand_err > b->bound).logical_and(mask).any().item<bool>()) return std::nullopt;
    k = std::max(k, b->k);
  }
  const std::string d = short_dtype(dtype);
  const std::string figures = "max |err| vs float64 " + sci(worst_cand) + ", the library's " + sci(worst_lib);
  if (sum_of_terms) {
    if (k == 0) k = summed_length(w.schema, f64_inputs, wrong->front().first);
    return "error grows with K like " + d + " rounding (" + figures + (k ? ", K=" + std::to_string(k) : "") + ")";
  }
  return "within " + d + " rounding of the exact result (" + figures + ")";
}

std::optional<std::string> explain_uniform_relative_error(const WrongAnswer& w) {
  if (w.mismatch.category != policy::Category::ValueMismatch) return std::nullopt;
  auto wrong = wrong_floating_returns(w);
  if (!wrong || trivial_beside(w.inputs, flat_tensors(w.ref_returns), flat_tensors(w.cand_returns))) return std::nullopt;
  double typical = 0;
  for (auto& [i, m] : *wrong) {
    const auto dtype = flat_tensors(w.ref_returns)[i].scalar_type();
    const policy::Tolerance tol = w.policy.tolerance_for(w.op, short_dtype(dtype));
    const double floor = std::max(10 * tol.atol, std::numeric_limits<double>::min());
    at::Tensor significant = m.finite & (m.ref.abs() > floor);
    at::Tensor abs_err = (m.cand - m.ref).abs();
    at::Tensor rel = abs_err.masked_select(significant) / m.ref.abs().masked_select(significant);
    if (rel.numel() < 16) return std::nullopt;
    const double median = rel.median().item<double>();
    // Not a few bad elements: the worst is within 16 of the typical, and so is every small one.
    if (!(median > 0) || median > 1e-2 || rel.max().item<double>() > 16 * median) return std::nullopt;
    at::Tensor off = (abs_err > 16 * median * m.ref.abs() + tol.atol).logical_and(m.finite);
    if (off.any().item<bool>()) return std::nullopt;
    typical = std::max(typical, median);
  }
  return "every element off by a relative ~" + sci(typical) + ": imprecise arithmetic";
}

}  // namespace kg::harness

#include "cheats.h"

#include "kernelgate/loader.h"
#include "util.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>

namespace kg::harness {
namespace {

std::vector<at::Tensor> tensors_of(const std::vector<c10::IValue>& vs) {
  std::vector<at::Tensor> out;
  for (const auto& v : vs) {
    if (v.isTensor() && v.toTensor().defined()) out.push_back(v.toTensor());
    else if (v.isTensorList())
      for (const at::Tensor& t : v.toTensorList()) out.push_back(t);
    else if (v.isTuple())
      for (const auto& e : tensors_of(std::vector<c10::IValue>(v.toTupleRef().elements().begin(), v.toTupleRef().elements().end())))
        out.push_back(e);
  }
  return out;
}

// Each element's bytes as one row, so element-wise bitwise comparison is a row comparison.
at::Tensor byte_rows(const at::Tensor& t) {
  at::Tensor c = t.contiguous();
  return c.view({-1}).view(at::kByte).view({c.numel(), static_cast<int64_t>(c.element_size())});
}

at::Tensor equal_elements(const at::Tensor& a, const at::Tensor& b) { return byte_rows(a).eq(byte_rows(b)).all(1); }

bool same_layout(const at::Tensor& a, const at::Tensor& b) { return a.scalar_type() == b.scalar_type() && a.sizes() == b.sizes(); }

bool all_equal_bytes(const at::Tensor& a, const at::Tensor& b) {
  if (!same_layout(a, b)) return false;
  at::Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.data_ptr(), y.data_ptr(), static_cast<size_t>(x.numel()) * x.element_size()) == 0;
}

bool constant(const at::Tensor& t) {
  if (t.numel() < 2) return false;
  at::Tensor rows = byte_rows(t);
  return rows.eq(rows[0]).all().item<bool>();
}

// Of the elements where `c` differs from `r` (bitwise), the fraction that `marked(i)` (a mask
// over tensor i's elements) selects; -1 when the shapes do not line up or nothing differs.
template <typename Marked>
double wrong_fraction(const std::vector<at::Tensor>& c, const std::vector<at::Tensor>& r, Marked marked) {
  if (c.size() != r.size() || c.empty()) return -1;
  int64_t wrong = 0, selected = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    if (!same_layout(c[i], r[i])) return -1;
    if (c[i].numel() == 0) continue;
    at::Tensor bad = ~equal_elements(c[i], r[i]);
    wrong += bad.sum().item<int64_t>();
    const at::Tensor mask = marked(i);
    selected += (bad & mask).sum().item<int64_t>();
  }
  return wrong ? static_cast<double>(selected) / static_cast<double>(wrong) : -1;
}

}  // namespace

std::optional<std::string> trivial_output_evidence(const std::vector<c10::IValue>& inputs, const std::vector<c10::IValue>& ref_returns,
                                                   const std::vector<c10::IValue>& cand_returns) {
  auto cand = tensors_of(cand_returns), ref = tensors_of(ref_returns), in = tensors_of(inputs);
  for (size_t i = 0; i < cand.size() && i < ref.size(); ++i) {
    const at::Tensor& c = cand[i];
    if (c.numel() < 2 || all_equal_bytes(c, ref[i])) continue;
    if (constant(c) && !constant(ref[i])) {
      at::Tensor v = c.reshape({-1})[0];
      double x = c10::isComplexType(v.scalar_type()) ? at::real(v).item<double>() : v.item<double>();
      return "output " + std::to_string(i) + " is the constant " + std::to_string(x) + " in all " + std::to_string(c.numel()) +
             " elements; the reference is not constant";
    }
    for (size_t j = 0; j < in.size(); ++j)
      if (all_equal_bytes(c, in[j]) && !all_equal_bytes(ref[i], in[j]))
        return "output " + std::to_string(i) + " is bitwise input " + std::to_string(j) + " (identity or a view of it)";
  }
  return std::nullopt;
}

double same_bytes_fraction(const std::vector<c10::IValue>& now, const std::vector<c10::IValue>& before) {
  auto a = tensors_of(now), b = tensors_of(before);
  if (a.size() != b.size() || a.empty()) return -1;
  int64_t same = 0, total = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same_layout(a[i], b[i])) return -1;
    if (a[i].numel() == 0) continue;
    same += equal_elements(a[i], b[i]).sum().item<int64_t>();
    total += a[i].numel();
  }
  return total ? static_cast<double>(same) / static_cast<double>(total) : -1;
}

double stale_fraction(const std::vector<c10::IValue>& cand, const std::vector<c10::IValue>& ref, const std::vector<c10::IValue>& earlier) {
  auto c = tensors_of(cand), r = tensors_of(ref), e = tensors_of(earlier);
  if (e.size() != c.size()) return -1;
  for (size_t i = 0; i < c.size(); ++i)
    if (!same_layout(c[i], e[i])) return -1;
  return wrong_fraction(c, r, [&](size_t i) { return equal_elements(c[i], e[i]) & ~equal_elements(r[i], e[i]); });
}

double poison_fraction(const std::vector<c10::IValue>& cand, const std::vector<c10::IValue>& ref) {
  static constexpr uint8_t kJunk[4] = {0xef, 0xbe, 0xed, 0x7f};  // 0x7fedbeef, little-endian
  auto c = tensors_of(cand), r = tensors_of(ref);
  return wrong_fraction(c, r, [&](size_t i) {
    at::Tensor rows = byte_rows(c[i]);
    const int64_t size = rows.size(1);
    at::Tensor junk = at::zeros({rows.size(0)}, at::kBool);
    for (int phase = 0; phase < 4; ++phase) {
      at::Tensor pattern = at::empty({size}, at::kByte);
      for (int64_t k = 0; k < size; ++k) pattern[k] = kJunk[(phase + k) % 4];
      junk |= rows.eq(pattern).all(1);
    }
    return junk;
  });
}

namespace {

// Shuffles the floating-point values of `t` (in place) outside the first and last `keep`
// positions in index order and in memory order. True when a value changed.
bool shuffle_interior(at::Tensor& t, std::mt19937_64& rng, int64_t keep) {
  if (!t.defined() || !(t.is_floating_point() || t.is_complex()) || !t.is_non_overlapping_and_dense()) return false;
  const int64_t n = t.numel();
  if (n <= 2 * keep + 1) return false;
  // Each element's position in memory, in index order: a permutation of [0, n) for a dense tensor.
  at::Tensor mem = at::zeros(t.sizes(), at::kLong);
  for (int64_t d = 0; d < t.dim(); ++d) {
    std::vector<int64_t> shape(static_cast<size_t>(t.dim()), 1);
    shape[static_cast<size_t>(d)] = t.size(d);
    mem += at::arange(t.size(d), at::kLong).view(shape) * t.stride(d);
  }
  mem = mem.reshape({-1});
  mem -= mem.min();
  at::Tensor idx = at::arange(n, at::kLong);
  at::Tensor pinned = (idx < keep) | (idx >= n - keep) | (mem < keep) | (mem >= n - keep);
  at::Tensor free = at::nonzero(~pinned).reshape({-1}).contiguous();
  std::vector<int64_t> order(static_cast<size_t>(free.numel()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  at::Tensor from = free.index_select(0, at::tensor(order, at::kLong));
  at::Tensor flat = t.reshape({-1}).clone();
  at::Tensor shuffled = flat.clone();
  shuffled.index_put_({free}, flat.index_select(0, from));
  if (equal_elements(shuffled, flat).all().item<bool>()) return false;
  t.copy_(shuffled.view(t.sizes()));
  return true;
}

bool needs_order(const Sample& sample) {
  const std::vector<ArgRule> rules = sample.rules.empty() ? builtin_rules(sample.op) : sample.rules;
  return std::any_of(rules.begin(), rules.end(),
                     [](const ArgRule& r) { return r.rule == ValueRule::Sorted || r.rule == ValueRule::Offsets; });
}

// Strides for `sizes` in the memory order of (`old_sizes`, `old_strides`); false when those are
// not a dense layout (expanded, gapped or overlapping).
bool dense_strides_like(const std::vector<int64_t>& old_sizes, const std::vector<int64_t>& old_strides, const std::vector<int64_t>& sizes,
                        std::vector<int64_t>* strides) {
  if (old_strides.size() != old_sizes.size()) return false;
  std::vector<size_t> order(old_sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return old_strides[a] < old_strides[b]; });
  strides->assign(sizes.size(), 0);
  int64_t expected = 1, next = 1;
  for (size_t d : order) {
    if (old_sizes[d] != 1 && old_strides[d] != expected) return false;
    if (old_sizes[d] != 1) expected *= old_sizes[d];
    (*strides)[d] = next;
    next *= sizes[d];
  }
  return true;
}

bool enlarge(trace::Value& v, int64_t factor) {
  if (v.kind == trace::Value::Kind::Tensor) {
    trace::TensorSpec& t = v.tensor;
    const std::vector<int64_t> old_shape = t.shape, old_strides = t.strides;
    for (int64_t& s : t.shape)
      if (s > 1) s *= factor;
    return !t.has_strides || dense_strides_like(old_shape, old_strides, t.shape, &t.strides);
  }
  for (trace::Value& item : v.items)
    if (!enlarge(item, factor)) return false;
  return true;
}

int64_t value_numel(const trace::Value& v) {
  if (v.kind == trace::Value::Kind::Tensor) {
    int64_t n = 1;
    for (int64_t s : v.tensor.shape) n *= s;
    return n;
  }
  int64_t n = 0;
  for (const trace::Value& item : v.items) n += value_numel(item);
  return n;
}

}  // namespace

std::optional<std::vector<c10::IValue>> fingerprint_twin(const Sample& sample, const std::vector<c10::IValue>& inputs, std::mt19937_64& rng,
                                                         int64_t keep) {
  if (needs_order(sample)) return std::nullopt;
  std::vector<c10::IValue> twin = loader::clone_values(inputs);
  bool changed = false;
  for (const auto& v : twin) {
    if (v.isTensor()) {
      at::Tensor t = v.toTensor();
      changed |= shuffle_interior(t, rng, keep);
    } else if (v.isTensorList()) {
      for (at::Tensor t : v.toTensorList()) changed |= shuffle_interior(t, rng, keep);
    }
  }
  if (!changed) return std::nullopt;
  return twin;
}

std::optional<Sample> enlarged_sample(const Sample& sample, int64_t factor) {
  for (int64_t off : sample.storage_offsets)
    if (off != 0) return std::nullopt;
  Sample big = sample;
  for (trace::Value& v : big.call.args)
    if (!enlarge(v, factor)) return std::nullopt;
  for (auto& [name, v] : big.call.kwargs)
    if (!enlarge(v, factor)) return std::nullopt;
  big.label = sample.label + ", sizes x" + std::to_string(factor);
  return big;
}

int64_t spec_numel(const Sample& sample) {
  int64_t n = 0;
  for (const trace::Value& v : sample.call.args) n += value_numel(v);
  for (const auto& [name, v] : sample.call.kwargs) n += value_numel(v);
  return n;
}

std::optional<std::string> escaped_work_evidence(const std::vector<double>& cand_idle_s, const std::vector<double>& eager_idle_s,
                                                 const std::vector<double>& cand_times_s) {
  if (cand_idle_s.size() < 3 || eager_idle_s.size() < 3 || cand_times_s.empty()) return std::nullopt;
  const double cand = quantile(cand_idle_s, 0.5), eager = quantile(eager_idle_s, 0.5), call = quantile(cand_times_s, 0.5);
  const double margin = std::max(20e-6, 0.5 * call);
  if (cand - eager <= margin) return std::nullopt;
  std::ostringstream o;
  o.precision(3);
  o << "after the end event of each timed call the device stayed busy for a median " << cand * 1e6 << " us (eager: " << eager * 1e6
    << " us, over " << cand_idle_s.size() << " calls) while the call itself measured " << call * 1e6
    << " us: work kept running outside the timed stream";
  return o.str();
}

uint64_t value_fingerprint(const std::vector<c10::IValue>& inputs) {
  auto mix = [](uint64_t& h, uint64_t w) {
    h ^= w * 0x9e3779b97f4a7c15ULL;
    h = ((h << 31) | (h >> 33)) * 0xbf58476d1ce4e5b9ULL;
  };
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (const at::Tensor& t : tensors_of(inputs)) {
    mix(h, static_cast<uint64_t>(t.scalar_type()) + 0x100);
    mix(h, static_cast<uint64_t>(t.dim()));
    for (int64_t s : t.sizes()) mix(h, static_cast<uint64_t>(s));
    if (t.numel() == 0) continue;
    at::Tensor c = t.contiguous();
    const auto* bytes = static_cast<const unsigned char*>(c.data_ptr());
    const size_t n = static_cast<size_t>(c.numel()) * c.element_size();
    // Four independent lanes over 32 bytes at a time, folded in at the end: one lane's chain of
    // multiplies was the cost (3 ms for the size ladder's 16 MB rung on this machine's cores).
    uint64_t lane[4] = {h, h ^ 1, h ^ 2, h ^ 3};
    size_t k = 0;
    for (; k + 32 <= n; k += 32) {
      uint64_t w[4];
      std::memcpy(w, bytes + k, 32);
      for (int l = 0; l < 4; ++l) mix(lane[l], w[l]);
    }
    for (; k + 8 <= n; k += 8) {
      uint64_t w;
      std::memcpy(&w, bytes + k, 8);
      mix(lane[0], w);
    }
    uint64_t tail = 0;
    std::memcpy(&tail, bytes + k, n - k);
    mix(lane[0], tail ^ (static_cast<uint64_t>(n - k) << 56));
    h = lane[0];
    for (int l = 1; l < 4; ++l) mix(h, lane[l]);
  }
  return h;
}

bool replays_earlier_output(const std::vector<c10::IValue>& cand, const std::vector<c10::IValue>& ref,
                            const std::vector<c10::IValue>& earlier) {
  if (same_bytes_fraction(cand, earlier) != 1.0) return false;
  auto r = tensors_of(ref), e = tensors_of(earlier);
  if (r.size() != e.size()) return true;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i].sizes() != e[i].sizes()) return true;
    try {
      if (!all_equal_bytes(r[i].to(e[i].scalar_type()), e[i])) return true;
    } catch (const std::exception&) { return true; }  // not convertible: another answer
  }
  return false;  // the earlier output is this call's answer, in other dtypes
}

bool all_floating(const std::vector<c10::IValue>& values) {
  auto ts = tensors_of(values);
  return !ts.empty() && std::all_of(ts.begin(), ts.end(), [](const at::Tensor& t) { return t.is_floating_point() || t.is_complex(); });
}

namespace {

// Sets up to `max_changed` elements of `t` (dense, floating) to midpoints of two other finite
// elements. True when a value changed.
bool change_a_few(at::Tensor& t, std::mt19937_64& rng, int max_changed) {
  if (!t.defined() || !(t.is_floating_point() || t.is_complex()) || !t.is_non_overlapping_and_dense() || t.numel() < 3) return false;
  at::Tensor flat = t.contiguous().reshape({-1}).clone();
  at::Tensor finite = at::nonzero(at::isfinite(flat)).reshape({-1});
  const int64_t nf = finite.numel();
  if (nf < 3) return false;
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  const at::ScalarType wide = t.is_complex() ? at::kComplexDouble : at::kDouble;
  bool changed = false;
  for (int c = 0; c < max_changed; ++c) {
    const int64_t pos = finite[pick(nf)].item<int64_t>();
    for (int attempt = 0; attempt < 4; ++attempt) {
      const int64_t a = finite[pick(nf)].item<int64_t>(), b = finite[pick(nf)].item<int64_t>();
      if (a == pos || b == pos || a == b) continue;
      at::Tensor mid = ((flat[a].to(wide) + flat[b].to(wide)) / 2).to(t.scalar_type());
      if (all_equal_bytes(mid, flat[pos])) continue;
      flat[pos].copy_(mid);
      changed = true;
      break;
    }
  }
  if (changed) t.copy_(flat.view(t.sizes()));
  return changed;
}

}  // namespace

std::optional<std::vector<c10::IValue>> near_twin(const Sample& sample, const std::vector<c10::IValue>& inputs, std::mt19937_64& rng,
                                                  int max_changed) {
  if (needs_order(sample) || max_changed < 1) return std::nullopt;
  std::vector<c10::IValue> twin = loader::clone_values(inputs);
  bool changed = false;
  for (const auto& v : twin) {
    if (v.isTensor()) {
      at::Tensor t = v.toTensor();
      changed |= change_a_few(t, rng, max_changed);
    } else if (v.isTensorList()) {
      for (at::Tensor t : v.toTensorList()) changed |= change_a_few(t, rng, max_changed);
    }
  }
  if (!changed) return std::nullopt;
  return twin;
}

namespace {

// The leading slice of `t` to `sizes`, laid out densely in t's memory order where t is dense.
at::Tensor slice_to(const at::Tensor& t, const std::vector<int64_t>& sizes) {
  at::Tensor view = t;
  for (int64_t d = 0; d < t.dim(); ++d) view = view.narrow(d, 0, sizes[static_cast<size_t>(d)]);
  std::vector<int64_t> strides;
  if (!t.is_non_overlapping_and_dense() || !dense_strides_like(t.sizes().vec(), t.strides().vec(), sizes, &strides)) return view.clone();
  return at::empty_strided(sizes, strides, t.options()).copy_(view);
}

std::optional<c10::IValue> shrink_value(const c10::IValue& v, int64_t factor, bool* shrank) {
  auto shrink = [&](const at::Tensor& t) {
    if (!t.defined()) return t;
    std::vector<int64_t> sizes = t.sizes().vec();
    for (int64_t& s : sizes)
      if (s > 1) s = (s + factor - 1) / factor;
    if (sizes != t.sizes().vec()) *shrank = true;
    return slice_to(t, sizes);
  };
  if (v.isTensor()) return c10::IValue(shrink(v.toTensor()));
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList()) out.push_back(shrink(t));
    return c10::IValue(out);
  }
  if (v.isTuple()) return std::nullopt;
  return v;
}

std::optional<c10::IValue> slice_value_like(const c10::IValue& v, const c10::IValue& like) {
  auto cut = [](const at::Tensor& t, const at::Tensor& l) -> std::optional<at::Tensor> {
    if (!t.defined() || !l.defined()) return t.defined() == l.defined() ? std::optional<at::Tensor>(t) : std::nullopt;
    if (t.dim() != l.dim()) return std::nullopt;
    at::Tensor out = t;
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (l.size(d) > t.size(d)) return std::nullopt;
      out = out.narrow(d, 0, l.size(d));
    }
    return out;
  };
  if (v.isTensor() != like.isTensor() || v.isTensorList() != like.isTensorList() || v.isTuple() != like.isTuple()) return std::nullopt;
  if (v.isTensor()) {
    auto t = cut(v.toTensor(), like.toTensor());
    return t ? std::optional<c10::IValue>(*t) : std::nullopt;
  }
  if (v.isTensorList()) {
    auto a = v.toTensorList(), b = like.toTensorList();
    if (a.size() != b.size()) return std::nullopt;
    std::vector<at::Tensor> out;
    for (size_t i = 0; i < a.size(); ++i) {
      auto t = cut(a[i], b[i]);
      if (!t) return std::nullopt;
      out.push_back(*t);
    }
    return c10::IValue(out);
  }
  if (v.isTuple()) {
    const auto& a = v.toTupleRef().elements();
    const auto& b = like.toTupleRef().elements();
    if (a.size() != b.size()) return std::nullopt;
    std::vector<c10::IValue> out;
    for (size_t i = 0; i < a.size(); ++i) {
      auto e = slice_value_like(a[i], b[i]);
      if (!e) return std::nullopt;
      out.push_back(*e);
    }
    return c10::IValue(c10::ivalue::Tuple::create(std::move(out)));
  }
  return v;
}

double dtype_epsilon(at::ScalarType t) {
  switch (c10::toRealValueType(t)) {
    case at::kHalf: return 9.765625e-4;
    case at::kBFloat16: return 7.8125e-3;
    case at::kFloat: return 1.1920929e-7;
    case at::kDouble: return 2.220446049250313e-16;
    default: return 1.0;
  }
}

}  // namespace

std::optional<std::vector<c10::IValue>> leading_slice(const std::vector<c10::IValue>& inputs, int64_t factor) {
  if (factor < 2) return std::nullopt;
  std::vector<c10::IValue> out;
  bool shrank = false;
  for (const auto& v : inputs) {
    auto s = shrink_value(v, factor, &shrank);
    if (!s) return std::nullopt;
    out.push_back(std::move(*s));
  }
  if (!shrank) return std::nullopt;
  return out;
}

std::optional<std::vector<c10::IValue>> slice_like(const std::vector<c10::IValue>& values, const std::vector<c10::IValue>& like) {
  if (values.size() != like.size()) return std::nullopt;
  std::vector<c10::IValue> out;
  for (size_t i = 0; i < values.size(); ++i) {
    auto v = slice_value_like(values[i], like[i]);
    if (!v) return std::nullopt;
    out.push_back(std::move(*v));
  }
  return out;
}

bool bitwise_equal(const std::vector<c10::IValue>& a, const std::vector<c10::IValue>& b) {
  auto x = tensors_of(a), y = tensors_of(b);
  if (x.empty() || x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!all_equal_bytes(x[i], y[i])) return false;
  return true;
}

std::optional<ErrorVsTruth> error_vs_truth(const std::vector<c10::IValue>& values, const std::vector<c10::IValue>& truth) {
  auto v = tensors_of(values), t = tensors_of(truth);
  if (v.empty() || v.size() != t.size()) return std::nullopt;
  ErrorVsTruth e;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].sizes() != t[i].sizes()) return std::nullopt;
    if (v[i].numel() == 0) continue;
    const bool complex = v[i].is_complex() || t[i].is_complex();
    const at::ScalarType wide = complex ? at::kComplexDouble : at::kDouble;
    at::Tensor a = v[i].to(wide), b = t[i].to(wide);
    at::Tensor same = a.eq(b) | (at::isnan(a) & at::isnan(b));
    at::Tensor finite = at::isfinite(a) & at::isfinite(b);
    at::Tensor diff = at::where(finite, (a - b).abs(), at::full({}, std::numeric_limits<double>::infinity(), at::kDouble));
    diff = at::where(same, at::zeros({}, at::kDouble), diff);
    e.max_abs = std::max(e.max_abs, diff.max().item<double>());
    if (!v[i].is_floating_point() && !v[i].is_complex()) {
      e.floor = std::max(e.floor, 1.0);  // integers: one unit
      continue;
    }
    at::Tensor mag = at::where(at::isfinite(b), b.abs(), at::zeros({}, at::kDouble));
    e.floor = std::max(e.floor, dtype_epsilon(v[i].scalar_type()) * mag.max().item<double>());
  }
  return e;
}

std::optional<ErrorRatios> size_dependent_error(const ErrorVsTruth& cand_small, const ErrorVsTruth& lib_small,
                                                const ErrorVsTruth& cand_large, const ErrorVsTruth& lib_large) {
  auto unit = [](const ErrorVsTruth& lib) { return std::max({lib.max_abs, lib.floor, std::numeric_limits<double>::min()}); };
  ErrorRatios r{cand_small.max_abs / unit(lib_small), cand_large.max_abs / unit(lib_large)};
  if (r.small <= 2 && r.large >= 16) return r;
  return std::nullopt;
}

bool exact_values(const std::vector<c10::IValue>& values) {
  auto ts = tensors_of(values);
  return !ts.empty() && std::none_of(ts.begin(), ts.end(), [](const at::Tensor& t) { return t.is_floating_point() || t.is_complex(); });
}

bool differs_by_wraparound(const std::vector<c10::IValue>& cand, const std::vector<c10::IValue>& ref) {
  auto c = tensors_of(cand), r = tensors_of(ref);
  if (c.empty() || c.size() != r.size() || !exact_values(cand) || !exact_values(ref)) return false;
  for (int bits : {16, 32}) {
    bool all = true;
    for (size_t i = 0; i < c.size() && all; ++i) {
      if (c[i].sizes() != r[i].sizes()) return false;
      at::Tensor d = c[i].to(at::kLong) - r[i].to(at::kLong);
      all = d.remainder(int64_t{1} << bits).eq(0).all().item<bool>();
    }
    if (all) return true;
  }
  return false;
}

std::string shapes_text(const std::vector<c10::IValue>& values) {
  std::string out;
  for (const at::Tensor& t : tensors_of(values)) {
    if (!out.empty()) out += ", ";
    out += "[";
    for (int64_t d = 0; d < t.dim(); ++d) out += (d ? ", " : "") + std::to_string(t.size(d));
    out += "] " + short_dtype(t.scalar_type());
  }
  return out.empty() ? "no tensors" : out;
}

Spread nondeterminism_spread(const std::vector<c10::IValue>& cand_a, const std::vector<c10::IValue>& cand_b,
                             const std::vector<c10::IValue>& ref_a, const std::vector<c10::IValue>& ref_b) {
  Spread s;
  auto spread = [](const std::vector<c10::IValue>& a, const std::vector<c10::IValue>& b) {
    auto e = error_vs_truth(a, b);
    return e ? e->max_abs : std::numeric_limits<double>::infinity();
  };
  s.candidate = bitwise_equal(cand_a, cand_b) ? 0 : spread(cand_a, cand_b);
  s.reference = bitwise_equal(ref_a, ref_b) ? 0 : spread(ref_a, ref_b);
  s.evidence = s.candidate > 0 && !(s.reference > 0 && s.candidate <= 2 * s.reference);
  return s;
}

bool returns_only_views(const c10::FunctionSchema& schema) {
  if (schema.returns().empty()) return false;
  for (const auto& ret : schema.returns())
    if (!ret.alias_info() || ret.alias_info()->isWrite()) return false;
  return true;
}

}  // namespace kg::harness

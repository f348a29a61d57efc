#include "cheats.h"

#include "kernelgate/loader.h"
#include "util.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
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

bool returns_only_views(const c10::FunctionSchema& schema) {
  if (schema.returns().empty()) return false;
  for (const auto& ret : schema.returns())
    if (!ret.alias_info() || ret.alias_info()->isWrite()) return false;
  return true;
}

}  // namespace kg::harness

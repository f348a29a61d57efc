// The `edge` suite's builder: tensor specs with a memory layout, plain values, and the Builder
// that turns a call into a Sample. The family generators (suite_edge_*.cc) use it.
#include "suites.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace kg::harness::edge {
namespace {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) st[d - 1] = st[d] * std::max<int64_t>(shape[d], 1);
  return st;
}

Value make(Value::Kind k) {
  Value v;
  v.kind = k;
  return v;
}

// Tensors inside a value, in the order make_inputs draws them.
size_t count_tensors(const Value& v) {
  if (v.kind == Value::Kind::Tensor) return 1;
  size_t n = 0;
  for (const auto& x : v.items) n += count_tensors(x);
  return n;
}

}  // namespace

const std::vector<std::string> kFloat = {"f32", "f64", "f16", "bf16"};
const std::vector<std::string> kInt = {"i64", "i32", "i16", "i8", "u8"};
const std::vector<std::string> kAllReal = {"f32", "f64", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "b8"};
bool is_float(const std::string& dt) { return std::find(kFloat.begin(), kFloat.end(), dt) != kFloat.end(); }
bool is_int(const std::string& dt) { return std::find(kInt.begin(), kInt.end(), dt) != kInt.end(); }

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous: return "contiguous";
    case Layout::Transposed: return "transposed";
    case Layout::Strided: return "strided";
    case Layout::Offset: return "offset";
    case Layout::Expanded: return "expanded";
  }
  return "?";
}

TensorArg tensor(const std::vector<int64_t>& shape, const std::string& dtype, Layout layout) {
  TensorArg t;
  t.value = make(Value::Kind::Tensor);
  t.value.tensor.shape = shape;
  t.value.tensor.dtype = dtype;
  auto set_strides = [&](std::vector<int64_t> st) {
    t.value.tensor.strides = std::move(st);
    t.value.tensor.has_strides = true;
  };
  const size_t n = shape.size();
  if (layout == Layout::Transposed && n < 2) layout = Layout::Strided;
  switch (layout) {
    case Layout::Contiguous: break;
    case Layout::Transposed: {
      std::vector<int64_t> mem = shape;
      std::swap(mem[n - 1], mem[n - 2]);
      std::vector<int64_t> st = contiguous_strides(mem);
      std::swap(st[n - 1], st[n - 2]);
      set_strides(st);
      t.non_contiguous = shape[n - 1] > 1 && shape[n - 2] > 1;
      break;
    }
    case Layout::Strided: {
      if (n == 0) break;
      std::vector<int64_t> padded = shape;
      padded[n - 1] *= 2;
      std::vector<int64_t> st = contiguous_strides(padded);
      st[n - 1] = 2;
      set_strides(st);
      t.non_contiguous = shape[n - 1] > 1;
      break;
    }
    case Layout::Offset:
      t.offset = 3;
      t.non_contiguous = true;  // not contiguous from the storage's start
      break;
    case Layout::Expanded: {
      std::vector<int64_t> st = contiguous_strides(shape);
      for (size_t d = 0; d < n; ++d)
        if (shape[d] > 1) {
          st[d] = 0;
          set_strides(st);
          t.non_contiguous = true;
          break;
        }
      break;
    }
  }
  return t;
}

Value I(int64_t v) {
  Value x = make(Value::Kind::Int);
  x.i = v;
  return x;
}
Value F(double v) {
  Value x = make(Value::Kind::Float);
  x.f = v;
  return x;
}
Value B(bool v) {
  Value x = make(Value::Kind::Bool);
  x.b = v;
  return x;
}
Value S(const std::string& v) {
  Value x = make(Value::Kind::String);
  x.s = v;
  return x;
}
Value None() { return make(Value::Kind::None); }
Value Dtype(const std::string& short_name) {
  const auto d = names::try_parse_short_dtype(short_name);
  if (!d) throw std::logic_error("edge suite: unknown dtype " + short_name);
  Value x = make(Value::Kind::Dtype);
  x.s = names::torch_spelling(*d);
  return x;
}
Value Ints(const std::vector<int64_t>& v) {
  Value x = make(Value::Kind::List);
  for (int64_t i : v) x.items.push_back(I(i));
  return x;
}
Value List(std::vector<Value> v) {
  Value x = make(Value::Kind::List);
  x.items = std::move(v);
  return x;
}

Sample& Builder::add(const std::string& op, std::vector<Arg> args, const std::vector<std::pair<std::string, Arg>>& kwargs,
                     const std::string& label, ValueFamily family, unsigned traits) {
  Sample s;
  s.op = op;
  s.family = family;
  s.label = label;
  s.traits = traits;
  size_t tensor_index = 0;
  auto take = [&](const Arg& a) {
    if (a.is_tensor && a.offset > 0) {
      s.storage_offsets.resize(tensor_index + 1, 0);
      s.storage_offsets[tensor_index] = a.offset;
    }
    tensor_index += count_tensors(a.value);
  };
  for (auto& a : args) {
    take(a);
    s.call.args.push_back(std::move(a.value));
  }
  for (const auto& [k, a] : kwargs) {
    take(a);
    s.call.kwargs.emplace_back(k, a.value);
  }
  out_->push_back(std::move(s));
  return out_->back();
}

namespace {

bool has_float_tensor(const Value& v) {
  if (v.kind == Value::Kind::Tensor) return is_float(v.tensor.dtype);
  for (const auto& x : v.items)
    if (has_float_tensor(x)) return true;
  return false;
}

// Every op gets the edge cases its family generator did not write: derived from its first sample
// by the same rules for all ops (special values; the first tensor transposed or strided, and at a
// storage offset; a zero leading dim where the first tensor has one). A derived sample the
// reference refuses (a view that no longer fits) is a skip, never a failure.
void derive_missing_cases(std::vector<Sample>& all) {
  std::map<std::string, std::vector<size_t>> by_op;
  std::vector<std::string> order;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!by_op.count(all[i].op)) order.push_back(all[i].op);
    by_op[all[i].op].push_back(i);
  }
  std::vector<Sample> extra;
  for (const auto& op : order) {
    bool special = false, empty = false, layout = false;
    for (size_t i : by_op[op]) {
      const Sample& s = all[i];
      special |= s.family == ValueFamily::Special;
      empty |= (s.traits & kEmpty) || s.label.find("empty") != std::string::npos || s.label.find("0-d") != std::string::npos;
      for (int64_t o : s.storage_offsets) layout |= o > 0;
      for (const auto& a : s.call.args) layout |= a.kind == Value::Kind::Tensor && a.tensor.has_strides;
    }
    const Sample& first = all[by_op[op].front()];
    size_t ti = first.call.args.size(), draw_index = 0;
    for (size_t k = 0; k < first.call.args.size(); ++k) {
      if (first.call.args[k].kind == Value::Kind::Tensor && !first.call.args[k].tensor.has_strides) {
        ti = k;
        break;
      }
      draw_index += count_tensors(first.call.args[k]);
    }
    bool any_float = false;
    for (const auto& a : first.call.args) any_float |= has_float_tensor(a);
    if (!special && any_float) {
      Sample s = first;
      s.family = ValueFamily::Special;
      s.label = first.label + ", special values (derived)";
      extra.push_back(s);
    }
    if (ti == first.call.args.size()) continue;
    const trace::TensorSpec& spec = first.call.args[ti].tensor;
    if (!layout) {
      Sample s = first;
      s.call.args[ti] = tensor(spec.shape, spec.dtype, spec.shape.size() >= 2 ? Layout::Transposed : Layout::Strided).value;
      s.label = first.label + ", first tensor " + (spec.shape.size() >= 2 ? "transposed" : "strided") + " (derived)";
      extra.push_back(s);
      Sample o = first;
      o.storage_offsets.resize(std::max(o.storage_offsets.size(), draw_index + 1), 0);
      o.storage_offsets[draw_index] = 5;
      o.label = first.label + ", first tensor at an offset view (derived)";
      extra.push_back(o);
    }
    // Not for normalisation layers: libtorch 1.13's CPU batch norm divides by the (zero) element
    // count in integer arithmetic, a SIGFPE in the process computing the reference.
    const bool norm = op.find("norm") != std::string::npos;
    if (!empty && !norm && !spec.shape.empty() && spec.shape[0] > 0) {
      // Zero the leading dim of every top-level tensor that shares it (a batch dim).
      const int64_t lead = spec.shape[0];
      Sample s = first;
      auto zero_lead = [&](Value& a) {
        if (a.kind == Value::Kind::Tensor && !a.tensor.shape.empty() && a.tensor.shape[0] == lead) {
          a.tensor.shape[0] = 0;
          if (a.tensor.has_strides) a.tensor.has_strides = false, a.tensor.strides.clear();
        }
      };
      for (auto& a : s.call.args) zero_lead(a);
      for (auto& kv : s.call.kwargs) zero_lead(kv.second);  // out= follows the inputs
      s.label = first.label + ", leading dim 0 (derived)";
      s.traits |= kEmpty;
      extra.push_back(s);
    }
  }
  for (auto& s : extra) all.push_back(std::move(s));
}

}  // namespace

std::vector<Sample> samples(bool large) {
  std::vector<Sample> out;
  Builder b(&out);
  pointwise_samples(b, large);
  reduction_samples(b, large);
  nn_samples(b, large);
  shape_samples(b, large);
  if (!large) derive_missing_cases(out);
  return out;
}

}  // namespace kg::harness::edge

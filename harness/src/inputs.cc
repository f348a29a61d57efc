// Drawing concrete arguments from a sample spec. Shapes, dtypes and strides come from the spec;
// every value is drawn here from the run's seed.
#include "draws_ahead.h"
#include "kernelgate/harness.h"
#include "util.h"

#include <ATen/ATen.h>

#include <ATen/MemoryOverlap.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

namespace kg::harness {

std::string unmaterialisable_reason(const trace::TensorSpec& spec) {
  c10::ScalarType t;
  if (!dtype_from_short(spec.dtype, &t)) return "unknown dtype '" + spec.dtype + "'";
  if (spec.has_strides && spec.strides.size() != spec.shape.size())
    return std::to_string(spec.shape.size()) + " sizes but " + std::to_string(spec.strides.size()) + " strides";
  const int64_t item = static_cast<int64_t>(c10::elementSize(t));
  int64_t numel = 1, span = 1, stride = 1;
  for (size_t k = spec.shape.size(); k-- > 0;) {
    const int64_t size = spec.shape[k];
    if (size < 0) return "negative size " + std::to_string(size);
    if (spec.has_strides) {
      stride = spec.strides[k];
      if (stride < 0) return "negative stride " + std::to_string(stride);
    }
    // Every stride in bytes, and the storage the view spans in bytes, must fit int64 (libtorch's
    // and the runner protocol's arithmetic), even when another dimension makes the tensor empty.
    int64_t stride_bytes = 0, reach = 0;
    if (__builtin_mul_overflow(stride, item, &stride_bytes))
      return "dimension " + std::to_string(k) + "'s stride of " + std::to_string(stride) + " elements overflows int64 in bytes";
    if (__builtin_mul_overflow(size, numel, &numel)) return "its element count overflows int64";
    if (size > 0 && (__builtin_mul_overflow(size - 1, stride, &reach) || __builtin_add_overflow(span, reach, &span)))
      return "the storage it spans overflows int64";
    if (!spec.has_strides && k > 0 && __builtin_mul_overflow(stride, std::max<int64_t>(size, 1), &stride))
      return "dimension " + std::to_string(k) + " of size " + std::to_string(size) + " makes the contiguous strides overflow int64";
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(span, item, &bytes)) return "the storage it spans overflows int64 in bytes";
  return "";
}

namespace {

struct Drawer {
  std::mt19937_64& rng;
  ValueFamily family;
  const std::atomic<bool>* stop = nullptr;  // make_inputs' `stop`

  // Every 2^16 elements of a storage: a draw ahead nobody wants any more ends here.
  void check_stop(int64_t i) const {
    if ((i & 0xFFFF) == 0 && stop && stop->load(std::memory_order_relaxed)) throw DrawStopped("the draw was stopped");
  }

  double normal() { return std::normal_distribution<double>(0.0, 1.0)(rng); }
  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }

  // Mixed signs with a heavy tail: most values ~N(0,1), one in twenty scaled by up to e^5.
  double real_value() {
    double x = normal();
    if (uniform() < 0.05) x *= std::exp(uniform() * 5.0);
    if (family == ValueFamily::Positive) x = std::fabs(x) + 0.1;
    return x;
  }

  double huge_sign = 1.0;  // drawn once per tensor

  double special_value(c10::ScalarType t) {
    const double huge = t == at::kHalf ? 3.0e4 : t == at::kBFloat16 ? 1.0e38 : t == at::kFloat ? 1.0e37 : 1.0e300;
    const double denorm = t == at::kHalf ? 1.0e-7 : t == at::kBFloat16 ? 1.0e-39 : t == at::kFloat ? 1.0e-40 : 1.0e-310;
    switch (std::uniform_int_distribution<int>(0, 6)(rng)) {
      case 0: return std::numeric_limits<double>::quiet_NaN();
      case 1: return std::numeric_limits<double>::infinity();
      case 2: return -std::numeric_limits<double>::infinity();
      case 3: return -0.0;
      case 4: return denorm * (uniform() < 0.5 ? -1 : 1);
      // One sign for every huge value of a tensor: +H and -H meeting in one sum cancel exactly
      // in one summation order and not in another, which would fail honest kernels.
      case 5: return huge * huge_sign;
      default: return std::numeric_limits<double>::quiet_NaN();
    }
  }

  // Fills a contiguous 1-d storage of n elements of dtype t. A storage of more than 2^22
  // elements repeats a drawn block of 2^20 + 7 elements (a length that does not divide any
  // power-of-two size), so a 2^31-element sample needs no 8-byte-per-element staging.
  at::Tensor storage(int64_t n, c10::ScalarType t) {
    constexpr int64_t kTileAbove = int64_t{1} << 22, kBlock = (int64_t{1} << 20) + 7;
    if (n > kTileAbove) {
      at::Tensor block = storage(kBlock, t);
      at::Tensor out = at::empty({n}, block.options());
      for (int64_t off = 0; off < n; off += kBlock) {
        const int64_t len = std::min(kBlock, n - off);
        out.narrow(0, off, len).copy_(block.narrow(0, 0, len));
      }
      return out;
    }
    at::Tensor d = at::empty({n}, at::kDouble);
    double* p = d.data_ptr<double>();
    if (c10::isIntegralType(t, /*includeBool=*/true)) {
      if (t == at::kBool) {
        for (int64_t i = 0; i < n; ++i) {
          check_stop(i);
          p[i] = uniform() < 0.5 ? 1 : 0;
        }
      } else {
        const int lo = t == at::kByte || family == ValueFamily::Positive ? 0 : -100;
        std::uniform_int_distribution<int> dist(lo, 100);
        for (int64_t i = 0; i < n; ++i) {
          check_stop(i);
          p[i] = dist(rng);
        }
        if (family == ValueFamily::Special) {
          // The type's extremes (minimum + 1: INT_MIN / -1 traps on x86, and the reference runs
          // in the supervisor), 0 and -1, one element in eight and always the first.
          const double hi = static_cast<double>(int_max(t)), lo_x = t == at::kByte ? 0.0 : -hi;
          const double choices[] = {hi, lo_x, 0.0, t == at::kByte ? 1.0 : -1.0, hi - 1};
          for (int64_t i = 0; i < n; ++i)
            if (i == 0 || uniform() < 0.125) p[i] = choices[std::uniform_int_distribution<int>(0, 4)(rng)];
          if (t == at::kLong) return special_longs(d);
        }
      }
      return d.to(t);
    }
    for (int64_t i = 0; i < n; ++i) {
      check_stop(i);
      p[i] = real_value();
    }
    if (family == ValueFamily::Special) {
      huge_sign = uniform() < 0.5 ? -1.0 : 1.0;
      // One element in eight is special, and the first one always is, so even a tiny tensor has one.
      for (int64_t i = 0; i < n; ++i)
        if (i == 0 || uniform() < 0.125) p[i] = special_value(t);
    }
    if (c10::isComplexType(t)) {
      at::Tensor im = at::empty({n}, at::kDouble);
      double* q = im.data_ptr<double>();
      for (int64_t i = 0; i < n; ++i) q[i] = real_value();
      return at::complex(d, im).to(t);
    }
    return d.to(t);
  }

  static int64_t int_max(c10::ScalarType t) {
    switch (t) {
      case at::kByte: return 255;
      case at::kChar: return 127;
      case at::kShort: return 32767;
      case at::kInt: return 2147483647;
      default: return std::numeric_limits<int64_t>::max();
    }
  }

  // i64 extremes do not survive a trip through double: map the marker values exactly.
  static at::Tensor special_longs(const at::Tensor& d) {
    at::Tensor out = d.to(at::kLong);
    const double big = static_cast<double>(std::numeric_limits<int64_t>::max());
    int64_t* q = out.data_ptr<int64_t>();
    const double* p = d.data_ptr<double>();
    for (int64_t i = 0; i < d.numel(); ++i) {
      if (p[i] == big) q[i] = std::numeric_limits<int64_t>::max();
      else if (p[i] == -big) q[i] = std::numeric_limits<int64_t>::min() + 1;
      else if (p[i] == big - 1) q[i] = std::numeric_limits<int64_t>::max() - 1;
    }
    return out;
  }

  at::Tensor tensor(const trace::TensorSpec& spec, int64_t offset) {
    if (std::string why = unmaterialisable_reason(spec); !why.empty()) {
      trace::Value v;
      v.kind = trace::Value::Kind::Tensor;
      v.tensor = spec;
      throw UnsatisfiableSample("the sample's tensor " + trace::format_value(v) + " cannot be built: " + why);
    }
    c10::ScalarType t;
    if (!dtype_from_short(spec.dtype, &t)) throw std::runtime_error("unknown dtype '" + spec.dtype + "' in sample");
    for (int64_t s : spec.shape)
      if (s < 0) throw std::runtime_error("negative size in sample shape");
    if (offset < 0) throw std::runtime_error("negative storage offset in sample");
    if (!spec.has_strides) {
      int64_t n = 1;
      for (int64_t s : spec.shape) n *= s;
      if (offset == 0) return storage(n, t).view(spec.shape);
      std::vector<int64_t> strides(spec.shape.size(), 1);
      for (size_t d = spec.shape.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(spec.shape[d], 1);
      return storage(n + offset, t).as_strided(spec.shape, strides, offset);
    }
    if (spec.strides.size() != spec.shape.size()) throw std::runtime_error("sample strides and shape differ in length");
    int64_t span = 1;
    bool empty = false;
    for (size_t d = 0; d < spec.shape.size(); ++d) {
      if (spec.strides[d] < 0) throw std::runtime_error("negative stride in sample");
      if (spec.shape[d] == 0) empty = true;
      else span += (spec.shape[d] - 1) * spec.strides[d];
    }
    // The whole backing storage gets values, so elements between the view's are defined too.
    return storage(empty ? offset : span + offset, t).as_strided(spec.shape, spec.strides, offset);
  }

  int64_t next_offset = 0;  // index of the next tensor drawn, for Sample::storage_offsets
  const std::vector<int64_t>* offsets = nullptr;
  at::Tensor next_tensor(const trace::TensorSpec& spec) {
    size_t k = static_cast<size_t>(next_offset++);
    return tensor(spec, offsets && k < offsets->size() ? (*offsets)[k] : 0);
  }
};

// A Python number where the schema wants a tensor (`mul.Tensor(x, 0.5)`, as traces record it):
// a 0-d wrapped number, as PyTorch's argument parser makes one. Its dtype is the default one of its
// kind (i64, f32, bool), so type promotion is the same whether or not a consumer keeps the
// wrapped-number flag (a 0-d f32 tensor promotes like a wrapped float).
at::Tensor wrapped_number(const trace::Value& v) {
  using K = trace::Value::Kind;
  at::Tensor t = v.kind == K::Int    ? at::scalar_tensor(v.i, at::kLong)
                 : v.kind == K::Bool ? at::scalar_tensor(v.b, at::kBool)
                                     : at::scalar_tensor(v.f, at::kFloat);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

[[noreturn]] void type_error(const c10::Argument& a, const trace::Value& v, const std::string& why) {
  throw std::runtime_error("argument '" + a.name() + "' (" + a.real_type()->str() + "): " + why + ", got " + trace::format_value(v));
}

// A dtype argument: a torch name ("torch.float32", "float", "half") or a short one ("f32",
// "torch.f32").
int64_t dtype_code(const c10::Argument& a, const trace::Value& v) {
  const std::string_view s = std::string_view(v.s).substr(v.s.rfind("torch.", 0) == 0 ? 6 : 0);
  std::optional<names::Dtype> d = names::try_parse_torch_dtype(v.s);
  // Refused by their torch names, though their short names are taken: complex32 and chalf (c32),
  // and the aliases cfloat, cdouble and short.
  if (d == names::Dtype::C32 || s == "cfloat" || s == "cdouble" || s == "short") d.reset();
  if (!d) d = names::try_parse_short_dtype(s);
  if (const auto t = d ? scalar_type_of(*d) : std::nullopt) return static_cast<int64_t>(*t);
  type_error(a, v, "unknown dtype");
}

c10::IValue convert(const c10::Argument& a, const c10::TypePtr& type, const trace::Value& v, Drawer& draw) {
  using K = trace::Value::Kind;
  switch (type->kind()) {
    case c10::TypeKind::OptionalType:
      if (v.kind == K::None) return c10::IValue();
      return convert(a, type->castRaw<c10::OptionalType>()->getElementType(), v, draw);
    case c10::TypeKind::TensorType:
      if (v.kind == K::Int || v.kind == K::Float || v.kind == K::Bool) return wrapped_number(v);
      // A `Tensor` argument may still be undefined (attn_bias of the efficient-attention
      // backward): traces record that as None.
      if (v.kind == K::None) return at::Tensor();
      if (v.kind != K::Tensor) type_error(a, v, "expected a tensor");
      return draw.next_tensor(v.tensor);
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
      if (v.kind != K::Int) type_error(a, v, "expected an int");
      return v.i;
    case c10::TypeKind::FloatType:
      if (v.kind == K::Float) return v.f;
      if (v.kind == K::Int) return static_cast<double>(v.i);
      type_error(a, v, "expected a float");
    case c10::TypeKind::BoolType:
      if (v.kind != K::Bool) type_error(a, v, "expected a bool");
      return v.b;
    case c10::TypeKind::NumberType:
      if (v.kind == K::Int) return v.i;
      if (v.kind == K::Float) return v.f;
      if (v.kind == K::Bool) return v.b;
      type_error(a, v, "expected a number");
    case c10::TypeKind::StringType:
      if (v.kind != K::String) type_error(a, v, "expected a string");
      return v.s;
    case c10::TypeKind::ScalarTypeType:
      if (v.kind != K::Dtype && v.kind != K::Symbol) type_error(a, v, "expected a dtype");
      return dtype_code(a, v);
    case c10::TypeKind::LayoutType:
      if (v.kind == K::Symbol && (v.s == "torch.strided" || v.s == "strided")) return static_cast<int64_t>(c10::Layout::Strided);
      type_error(a, v, "expected torch.strided");
    case c10::TypeKind::MemoryFormatType:
      if (v.kind == K::Symbol) {
        if (v.s == "torch.contiguous_format") return static_cast<int64_t>(c10::MemoryFormat::Contiguous);
        if (v.s == "torch.preserve_format") return static_cast<int64_t>(c10::MemoryFormat::Preserve);
        if (v.s == "torch.channels_last") return static_cast<int64_t>(c10::MemoryFormat::ChannelsLast);
        if (v.s == "torch.channels_last_3d") return static_cast<int64_t>(c10::MemoryFormat::ChannelsLast3d);
      }
      type_error(a, v, "expected a memory format");
    case c10::TypeKind::DeviceObjType:
      // Tensors are drawn on the evaluation device; a device argument follows them.
      if (v.kind == K::Device || v.kind == K::String) return c10::Device(c10::DeviceType::CPU);
      type_error(a, v, "expected a device");
    case c10::TypeKind::ListType: {
      auto elem = type->castRaw<c10::ListType>()->getElementType();
      std::vector<trace::Value> items;
      if (v.kind == K::List || v.kind == K::Tuple) items = v.items;
      else if (v.kind == K::Int && (elem->kind() == c10::TypeKind::IntType || elem->kind() == c10::TypeKind::SymIntType)) items = {v};
      else type_error(a, v, "expected a list");
      switch (elem->kind()) {
        case c10::TypeKind::IntType:
        case c10::TypeKind::SymIntType: {
          std::vector<int64_t> out;
          for (const auto& x : items) out.push_back(convert(a, elem, x, draw).toInt());
          return out;
        }
        case c10::TypeKind::FloatType: {
          std::vector<double> out;
          for (const auto& x : items) out.push_back(convert(a, elem, x, draw).toDouble());
          return out;
        }
        case c10::TypeKind::BoolType: {
          c10::List<bool> out;
          for (const auto& x : items) out.push_back(convert(a, elem, x, draw).toBool());
          return out;
        }
        case c10::TypeKind::TensorType: {
          std::vector<at::Tensor> out;
          for (const auto& x : items) out.push_back(convert(a, elem, x, draw).toTensor());
          return out;
        }
        case c10::TypeKind::OptionalType: {
          c10::List<c10::optional<at::Tensor>> out;
          for (const auto& x : items) {
            c10::IValue e = convert(a, elem, x, draw);
            if (e.isNone()) out.push_back(c10::nullopt);
            else out.push_back(e.toTensor());
          }
          return out;
        }
        default: break;
      }
      type_error(a, v, "list element type not supported");
    }
    default: break;
  }
  type_error(a, v, "argument type not supported");
}

// ---- value rules ------------------------------------------------------------------------------

// Storage elements a tensor's view can reach (its whole backing storage, from element 0).
at::Tensor whole_storage(const at::Tensor& t) {
  const int64_t n = static_cast<int64_t>(t.storage().nbytes() / t.element_size());
  return at::empty({0}, t.options()).set_(t.storage(), 0, {n}, {1});
}

// Writes `values` (contiguous, t's shape) into t's view; when the view overlaps itself (stride 0),
// writes element-wise values into the whole storage instead.
void write_view(at::Tensor& t, const at::Tensor& values, const std::function<at::Tensor(int64_t)>& elementwise) {
  if (at::has_internal_overlap(t) == at::MemOverlap::Yes) {
    at::Tensor st = whole_storage(t);
    st.copy_(elementwise(st.numel()));
  } else {
    t.copy_(values.view(t.sizes()));
  }
}

struct RuleDrawer {
  std::mt19937_64& rng;

  at::Tensor indices(int64_t n, int64_t bound) {
    at::Tensor v = at::empty({n}, at::kLong);
    int64_t* p = v.data_ptr<int64_t>();
    std::uniform_int_distribution<int64_t> d(0, std::max<int64_t>(bound, 1) - 1);
    for (int64_t i = 0; i < n; ++i) p[i] = d(rng);
    return v;
  }
  // The first k entries of a random permutation of [0, bound), for each of `fibers` fibers.
  at::Tensor unique(int64_t fibers, int64_t k, int64_t bound) {
    at::Tensor v = at::empty({fibers, k}, at::kLong);
    int64_t* p = v.data_ptr<int64_t>();
    std::vector<int64_t> perm(static_cast<size_t>(std::max<int64_t>(bound, 0)));
    for (int64_t f = 0; f < fibers; ++f) {
      std::iota(perm.begin(), perm.end(), 0);
      for (int64_t i = 0; i < k; ++i) {
        int64_t j = std::uniform_int_distribution<int64_t>(i, bound - 1)(rng);
        std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
        p[f * k + i] = perm[static_cast<size_t>(i)];
      }
    }
    return v;
  }
  at::Tensor reals(int64_t n, double lo, double hi) {
    at::Tensor v = at::empty({n}, at::kDouble);
    double* p = v.data_ptr<double>();
    std::uniform_real_distribution<double> d(lo, hi);
    for (int64_t i = 0; i < n; ++i) p[i] = d(rng);
    return v;
  }
  at::Tensor positive(int64_t n) {
    at::Tensor v = at::empty({n}, at::kDouble);
    double* p = v.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) {
      double x = std::fabs(std::normal_distribution<double>(0.0, 1.0)(rng)) + 0.05;
      if (std::uniform_real_distribution<double>(0, 1)(rng) < 0.05) x *= 50;
      p[i] = x;
    }
    return v;
  }
  at::Tensor nonzero(int64_t n, bool unsigned_type) {
    at::Tensor v = indices(n, 100) + 1;  // 1..100
    if (!unsigned_type) {
      int64_t* p = v.data_ptr<int64_t>();
      for (int64_t i = 0; i < n; ++i)
        if (std::uniform_int_distribution<int>(0, 1)(rng)) p[i] = -p[i];
    }
    return v;
  }
};

int64_t wrap_dim(int64_t d, int64_t ndim) {
  if (ndim == 0) return 0;
  if (d < 0) d += ndim;
  return std::clamp<int64_t>(d, 0, ndim - 1);
}

void apply_to_tensor(const ArgRule& r, at::Tensor t, int64_t bound, int64_t unique_dim, RuleDrawer& rd, bool last_is_end = false) {
  if (!t.defined() || t.numel() == 0) return;
  const bool integral = c10::isIntegralType(t.scalar_type(), /*includeBool=*/false);
  if (integral && bound <= 0 && !r.size_of.empty() &&
      (r.rule == ValueRule::Index || r.rule == ValueRule::UniqueIndex || r.rule == ValueRule::Pivot))
    throw UnsatisfiableSample("argument '" + r.arg + "' holds " + std::to_string(t.numel()) + " indices into '" + r.size_of +
                              "', which is empty along the indexed dimension");
  const bool floating = c10::isFloatingType(t.scalar_type());
  const int64_t n = t.numel();
  auto as = [&](at::Tensor v) { return v.to(t.scalar_type()); };
  switch (r.rule) {
    case ValueRule::Index: {
      if (!integral) return;
      write_view(t, as(rd.indices(n, bound)), [&](int64_t m) { return as(rd.indices(m, bound)); });
      return;
    }
    case ValueRule::UniqueIndex: {
      if (!integral) return;
      at::Tensor values;
      const int64_t block = [&] {
        if (r.unique_trailing <= 0 || t.dim() < r.unique_trailing) return int64_t{0};
        int64_t k = 1;
        for (int64_t d = t.dim() - r.unique_trailing; d < t.dim(); ++d) k *= t.size(d);
        return k;
      }();
      if (r.unique_trailing > 0 && block > bound)
        throw UnsatisfiableSample("argument '" + r.arg + "' needs " + std::to_string(block) + " distinct indices per plane, but '" +
                                  r.size_of + "' has only " + std::to_string(bound) + " positions (two inputs would race for one output)");
      if (block > 0 && block <= bound) {
        values = rd.unique(n / block, block, bound).view(t.sizes());
      } else if (unique_dim >= 0 && t.dim() > 0) {
        // Distinct within each fiber along unique_dim: draw [fibers, k] and move k into place.
        const int64_t k = t.size(unique_dim);
        if (k <= bound) {
          at::Tensor moved = t.movedim(unique_dim, -1);
          at::Tensor v = rd.unique(n / k, k, bound).view(moved.sizes());
          values = v.movedim(-1, unique_dim).contiguous();
        }
      } else if (n <= bound) {
        values = rd.unique(1, n, bound).view(t.sizes());
      }
      if (!values.defined()) values = rd.indices(n, bound).view(t.sizes());  // more writes than slots
      write_view(t, as(values), [&](int64_t m) { return as(rd.indices(m, bound)); });
      return;
    }
    case ValueRule::Offsets: {
      // Bag starts inside the indices; with include_last_offset the last entry is their end.
      // (libtorch 1.13 corrupts its heap on include_last_offset offsets that do not end at numel.)
      if (!integral) return;
      at::Tensor v = std::get<0>(rd.indices(n, bound).sort());
      v.data_ptr<int64_t>()[0] = 0;
      if (last_is_end) v.data_ptr<int64_t>()[n - 1] = bound;
      write_view(t, as(v), [&](int64_t m) { return as(at::zeros({m}, at::kLong)); });
      return;
    }
    case ValueRule::Sorted: {
      if (t.dim() == 0) return;
      at::Tensor v = t.contiguous().clone();
      v = std::get<0>(v.sort(-1));
      write_view(t, v, [&](int64_t m) { return at::zeros({m}, t.options()); });
      return;
    }
    case ValueRule::Positive: {
      if (t.scalar_type() == at::kBool) return;
      auto gen = [&](int64_t m) { return integral ? as(rd.indices(m, 100) + 1) : as(rd.positive(m)); };
      write_view(t, gen(n), gen);
      return;
    }
    case ValueRule::Unit:
    case ValueRule::SignedUnit: {
      if (!floating) return;
      const double lo = r.rule == ValueRule::Unit ? 0.0 : -1.0;
      auto gen = [&](int64_t m) { return as(rd.reals(m, lo, 1.0)); };
      write_view(t, gen(n), gen);
      return;
    }
    case ValueRule::Pivot: {
      if (!integral) return;
      auto gen = [&](int64_t m) { return as(rd.indices(m, bound) + 1); };
      write_view(t, gen(n), gen);
      return;
    }
    case ValueRule::NonZero: {
      if (!integral) return;
      const bool u = t.scalar_type() == at::kByte;
      auto gen = [&](int64_t m) { return as(rd.nonzero(m, u)); };
      write_view(t, gen(n), gen);
      return;
    }
  }
}

void apply_rule(const c10::FunctionSchema& schema, const ArgRule& r, std::vector<c10::IValue>& args, std::mt19937_64& rng) {
  const int ai = arg_index(schema, r.arg);
  if (ai < 0) return;  // an overload without that argument
  c10::IValue& target = args[static_cast<size_t>(ai)];
  RuleDrawer rd{rng};
  // The reference tensor whose size bounds the indices, and the dim.
  at::Tensor ref;
  if (!r.size_of.empty()) {
    int ri = arg_index(schema, r.size_of);
    if (ri >= 0 && args[static_cast<size_t>(ri)].isTensor()) ref = args[static_cast<size_t>(ri)].toTensor();
    if (!ref.defined()) return;
  }
  int64_t bound = r.bound;
  if (!r.bound_arg.empty()) {
    int bi = arg_index(schema, r.bound_arg);
    if (bi >= 0 && args[static_cast<size_t>(bi)].isInt()) bound = args[static_cast<size_t>(bi)].toInt();
    if (bi >= 0 && args[static_cast<size_t>(bi)].isIntList()) {  // max_unpool's output_size: one plane
      bound = 1;
      for (int64_t d : args[static_cast<size_t>(bi)].toIntVector()) bound *= d;
    }
    if (bound <= 0) bound = 8;  // one_hot's num_classes=-1: any small non-negative class
  }
  int64_t dim = r.dim;
  bool whole = r.numel;
  if (!r.dim_arg.empty()) {
    int di = arg_index(schema, r.dim_arg);
    if (di >= 0 && args[static_cast<size_t>(di)].isInt()) dim = args[static_cast<size_t>(di)].toInt();
    else whole = true;  // dim=None: the flattened tensor
  }
  if (target.isTensorList() || target.isList()) {
    if (!r.per_list_position || !ref.defined()) return;
    int64_t pos = 0;
    for (const c10::IValue& e : target.toListRef()) {
      if (!e.isTensor() || !e.toTensor().defined()) {
        ++pos;
        continue;
      }
      at::Tensor t = e.toTensor();
      if (t.scalar_type() == at::kBool || t.scalar_type() == at::kByte) {
        pos += std::max<int64_t>(t.dim(), 1);  // a mask
        continue;
      }
      const int64_t b = pos < ref.dim() ? ref.size(pos) : 1;
      apply_to_tensor(r, t, b, -1, rd);
      ++pos;
    }
    return;
  }
  if (!target.isTensor()) return;
  at::Tensor t = target.toTensor();
  int64_t unique_dim = -1;
  if (ref.defined()) {
    if (whole) {
      bound = ref.numel();
    } else if (r.trailing_product) {
      const int64_t d0 = wrap_dim(dim, ref.dim());
      bound = 1;
      for (int64_t d = d0; d < ref.dim(); ++d) bound *= ref.size(d);
    } else {
      const int64_t d = wrap_dim(dim, ref.dim());
      bound = ref.dim() == 0 ? 1 : ref.size(d);
      if (t.dim() == ref.dim() && t.dim() > 1) unique_dim = d;
    }
  }
  if (r.rule == ValueRule::Sorted) {
    // searchsorted(..., sorter=): the sequence stays unsorted and the sorter is its argsort.
    int si = arg_index(schema, "sorter");
    if (si >= 0 && args[static_cast<size_t>(si)].isTensor() && args[static_cast<size_t>(si)].toTensor().defined()) {
      at::Tensor sorter = args[static_cast<size_t>(si)].toTensor();
      if (t.dim() > 0 && sorter.sizes() == t.sizes() && at::has_internal_overlap(sorter) != at::MemOverlap::Yes)
        sorter.copy_(std::get<1>(t.contiguous().sort(/*stable=*/true, -1, false)).to(sorter.scalar_type()));
      return;
    }
  }
  bool last_is_end = false;
  if (r.rule == ValueRule::Offsets) {
    int li = arg_index(schema, "include_last_offset");
    last_is_end = li >= 0 && args[static_cast<size_t>(li)].isBool() && args[static_cast<size_t>(li)].toBool();
  }
  apply_to_tensor(r, t, bound, unique_dim, rd, last_is_end);
}

}  // namespace

std::vector<c10::IValue> make_inputs(const c10::FunctionSchema& schema, const Sample& sample, std::mt19937_64& rng) {
  return make_inputs(schema, sample, rng, nullptr);
}

std::vector<c10::IValue> make_inputs(const c10::FunctionSchema& schema, const Sample& sample, std::mt19937_64& rng,
                                     const std::atomic<bool>* stop) {
  Drawer draw{rng, sample.family, stop};
  draw.offsets = &sample.storage_offsets;
  const auto& args = schema.arguments();
  if (sample.call.args.size() > args.size())
    throw std::runtime_error(sample.op + ": sample has " + std::to_string(sample.call.args.size()) +
                             " positional arguments, the schema takes " + std::to_string(args.size()));
  for (const auto& kw : sample.call.kwargs) {
    bool known = false;
    for (const auto& a : args) known |= a.name() == kw.first;
    if (!known) throw std::runtime_error(sample.op + ": sample has keyword '" + kw.first + "' that the schema does not take");
  }
  std::vector<c10::IValue> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const c10::Argument& a = args[i];
    const trace::Value* v = i < sample.call.args.size() ? &sample.call.args[i] : nullptr;
    for (const auto& kw : sample.call.kwargs)
      if (kw.first == a.name()) v = &kw.second;
    if (v) {
      out.push_back(convert(a, a.real_type(), *v, draw));
    } else if (a.default_value()) {
      out.push_back(*a.default_value());
    } else {
      throw std::runtime_error(sample.op + ": sample gives no value for argument '" + a.name() + "'");
    }
  }
  const std::vector<ArgRule> builtin = sample.rules.empty() ? builtin_rules(sample.op) : std::vector<ArgRule>{};
  for (const ArgRule& r : sample.rules.empty() ? builtin : sample.rules) apply_rule(schema, r, out, rng);
  return out;
}

namespace {

// Shorthands for the rule table.
ArgRule index_of(const char* arg, const char* size_of, const char* dim_arg, ValueRule rule = ValueRule::Index) {
  ArgRule r;
  r.arg = arg;
  r.rule = rule;
  r.size_of = size_of;
  r.dim_arg = dim_arg;
  return r;
}
ArgRule index_dim(const char* arg, const char* size_of, int64_t dim, ValueRule rule = ValueRule::Index) {
  ArgRule r;
  r.arg = arg;
  r.rule = rule;
  r.size_of = size_of;
  r.dim = dim;
  return r;
}
ArgRule index_numel(const char* arg, const char* size_of, ValueRule rule = ValueRule::Index) {
  ArgRule r = index_dim(arg, size_of, 0, rule);
  r.numel = true;
  return r;
}
ArgRule index_list(const char* arg, const char* size_of, ValueRule rule) {
  ArgRule r = index_dim(arg, size_of, 0, rule);
  r.per_list_position = true;
  return r;
}
ArgRule below(const char* arg, int64_t bound) {
  ArgRule r;
  r.arg = arg;
  r.bound = bound;
  return r;
}
ArgRule bound_by(const char* arg, const char* bound_arg) {
  ArgRule r;
  r.arg = arg;
  r.bound_arg = bound_arg;
  return r;
}
ArgRule trailing(const char* arg, const char* size_of, int64_t from_dim) {
  ArgRule r = index_dim(arg, size_of, from_dim);
  r.trailing_product = true;
  return r;
}
ArgRule plain(const char* arg, ValueRule rule) {
  ArgRule r;
  r.arg = arg;
  r.rule = rule;
  return r;
}

// Keyed by the op's base name (in-place and out= variants share it) or by the full overload name.
const std::unordered_map<std::string, std::vector<ArgRule>>& rule_table() {
  using V = ValueRule;
  static const std::unordered_map<std::string, std::vector<ArgRule>> table = [] {
    std::unordered_map<std::string, std::vector<ArgRule>> t;
    t["gather"] = {index_of("index", "self", "dim")};
    // Overwriting scatters get distinct targets per fiber: with duplicates the winner is unspecified.
    for (const char* op : {"scatter", "scatter_"}) t[op] = {index_of("index", "self", "dim", V::UniqueIndex)};
    for (const char* op : {"scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_", "index_select", "index_add", "index_add_",
                           "index_fill", "index_fill_", "index_reduce", "index_reduce_"})
      t[op] = {index_of("index", "self", "dim")};
    for (const char* op : {"index_copy", "index_copy_"}) t[op] = {index_of("index", "self", "dim", V::UniqueIndex)};
    for (const char* op : {"index", "_unsafe_index"}) t[op] = {index_list("indices", "self", V::Index)};
    for (const char* op : {"index_put", "index_put_", "_index_put_impl_", "_index_put_impl", "_unsafe_index_put"})
      t[op] = {index_list("indices", "self", V::UniqueIndex)};
    t["take"] = {index_numel("index", "self")};
    for (const char* op : {"put", "put_"}) t[op] = {index_numel("index", "self", V::UniqueIndex)};
    t["take_along_dim"] = {index_of("indices", "self", "dim")};
    t["embedding"] = {index_dim("indices", "weight", 0)};
    for (const char* op : {"embedding_dense_backward", "embedding_backward", "embedding_sparse_backward"})
      t[op] = {bound_by("indices", "num_weights")};
    for (const char* op : {"embedding_bag", "_embedding_bag", "_embedding_bag_forward_only"}) {
      ArgRule off = index_numel("offsets", "indices", V::Offsets);
      t[op] = {index_dim("indices", "weight", 0), off};
    }
    // Class targets: the class dim is 1, or 0 for an unbatched input (clamped to the last dim).
    for (const char* op : {"nll_loss", "nll_loss_forward", "nll_loss_backward", "nll_loss_nd", "nll_loss2d", "nll_loss2d_forward",
                           "nll_loss2d_backward", "cross_entropy_loss"})
      t[op] = {index_dim("target", "self", 1)};
    for (const char* op : {"multi_margin_loss", "multilabel_margin_loss", "multilabel_margin_loss_forward"})
      t[op] = {index_dim("target", "self", -1)};
    t["one_hot"] = {bound_by("self", "num_classes")};
    t["searchsorted"] = {plain("sorted_sequence", V::Sorted)};
    t["bucketize"] = {plain("boundaries", V::Sorted)};
    t["repeat_interleave"] = {below("repeats", 4)};
    t["bincount"] = {below("self", 64)};
    // Max-pool indices point into one input plane (H*W, or D*H*W).
    t["max_pool2d_with_indices_backward"] = {trailing("indices", "self", -2)};
    t["adaptive_max_pool2d_backward"] = {trailing("indices", "self", -2)};
    t["max_pool3d_with_indices_backward"] = {trailing("indices", "self", -3)};
    t["adaptive_max_pool3d_backward"] = {trailing("indices", "self", -3)};
    // Integer powers: a negative integer exponent is an error for integer bases.
    for (const char* op : {"pow", "pow_"}) t[op] = {below("exponent", 5)};
    // Shifts by the type's width or more are undefined in C++.
    for (const char* op : {"bitwise_left_shift", "bitwise_left_shift_", "bitwise_right_shift", "bitwise_right_shift_", "__lshift__",
                           "__rshift__", "__ilshift__", "__irshift__"})
      t[op] = {below("other", 8)};
    // Integer division by zero raises.
    for (const char* op : {"remainder", "remainder_", "fmod", "fmod_", "floor_divide", "floor_divide_"})
      t[op] = {plain("other", V::NonZero)};
    t["div.Tensor_mode"] = {plain("other", V::NonZero)};
    t["div_.Tensor_mode"] = {plain("other", V::NonZero)};
    t["div.out_mode"] = {plain("other", V::NonZero)};
    for (const char* op :
         {"native_batch_norm", "batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training", "_batch_norm_impl_index",
          "native_batch_norm_backward", "batch_norm_backward", "_native_batch_norm_legit_functional"})
      t[op] = {plain("running_var", V::Positive), plain("save_invstd", V::Positive)};
    for (const char* op : {"native_layer_norm_backward", "native_group_norm_backward"}) t[op] = {plain("rstd", V::Positive)};
    for (const char* op : {"binary_cross_entropy", "binary_cross_entropy_backward"})
      t[op] = {plain("self", V::Unit), plain("target", V::Unit)};
    t["binary_cross_entropy_with_logits"] = {plain("target", V::Unit)};
    for (const char* op : {"grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "_grid_sampler_2d_cpu_fallback"})
      t[op] = {plain("grid", V::SignedUnit)};
    t["polar"] = {plain("abs", V::Positive)};
    // Distinct within each plane: where two inputs of a plane point at one output the winner is
    // unspecified (the CUDA kernel races).
    for (const char* op : {"max_unpool2d", "max_unpool3d"}) {
      ArgRule r = bound_by("indices", "output_size");
      r.rule = ValueRule::UniqueIndex;
      r.unique_trailing = op == std::string("max_unpool2d") ? 2 : 3;
      t[op] = {r};
    }
    // Random pivots outside [1, n] make LAPACK read out of bounds (ldl_solve crashed 1.13).
    t["linalg_ldl_solve"] = {index_dim("pivots", "LD", -1, V::Pivot)};
    t["linalg_lu_solve"] = {index_dim("pivots", "LU", -1, V::Pivot)};
    t["lu_solve"] = {index_dim("LU_pivots", "LU_data", -1, V::Pivot)};
    t["lu_unpack"] = {index_dim("LU_pivots", "LU_data", -2, V::Pivot)};
    return t;
  }();
  return table;
}

}  // namespace

std::vector<ArgRule> builtin_rules(const std::string& op) {
  const auto& t = rule_table();
  auto it = t.find(op);
  if (it != t.end()) return it->second;
  it = t.find(op.substr(0, op.find('.')));
  if (it != t.end()) return it->second;
  return {};
}

unsigned input_traits(const Sample& sample, const std::vector<c10::IValue>& inputs) {
  unsigned t = sample.traits;
  if (sample.family == ValueFamily::Special) t |= static_cast<unsigned>(InputTrait::SpecialValues);
  std::vector<at::Tensor> tensors;
  for (const auto& v : inputs) {
    if (v.isTensor() && v.toTensor().defined()) tensors.push_back(v.toTensor());
    if (v.isTensorList())
      for (const at::Tensor& x : v.toTensorList()) tensors.push_back(x);
  }
  for (const auto& x : tensors) {
    if (!x.is_contiguous() || x.storage_offset() != 0) t |= static_cast<unsigned>(InputTrait::NonContiguous);
    if (x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16) t |= static_cast<unsigned>(InputTrait::LowPrecision);
    if (x.numel() > (int64_t{1} << 24)) t |= static_cast<unsigned>(InputTrait::LargeSize);
    if (x.numel() == 0 || x.dim() == 0) t |= static_cast<unsigned>(InputTrait::EmptyOrScalar);
  }
  return t;
}

std::vector<std::string> trait_list(unsigned traits) {
  static const std::pair<InputTrait, const char*> names[] = {{InputTrait::SpecialValues, "special_values"},
                                                             {InputTrait::Broadcasting, "broadcasting"},
                                                             {InputTrait::NonContiguous, "non_contiguous"},
                                                             {InputTrait::LowPrecision, "dtype"},
                                                             {InputTrait::LargeSize, "large_sizes"},
                                                             {InputTrait::EmptyOrScalar, "empty_or_0d"}};
  std::vector<std::string> out;
  for (const auto& [bit, name] : names)
    if (traits & static_cast<unsigned>(bit)) out.push_back(name);
  return out;
}

std::string trait_names(unsigned traits) {
  std::string out;
  for (const auto& name : trait_list(traits)) out += (out.empty() ? "" : ",") + name;
  return out;
}

}  // namespace kg::harness

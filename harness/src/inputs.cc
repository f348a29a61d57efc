// Drawing concrete arguments from a sample spec. Shapes, dtypes and strides come from the spec;
// every value is drawn here from the run's seed.
#include "kernelgate/harness.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace kg::harness {
namespace {

struct Drawer {
  std::mt19937_64& rng;
  ValueFamily family;

  double normal() { return std::normal_distribution<double>(0.0, 1.0)(rng); }
  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }

  // Mixed signs with a heavy tail: most values ~N(0,1), one in twenty scaled by up to e^5.
  double real_value() {
    double x = normal();
    if (uniform() < 0.05) x *= std::exp(uniform() * 5.0);
    if (family == ValueFamily::Positive) x = std::fabs(x) + 0.1;
    return x;
  }

  double special_value(c10::ScalarType t) {
    const double huge = t == at::kHalf ? 3.0e4 : t == at::kBFloat16 ? 1.0e38 : t == at::kFloat ? 1.0e37 : 1.0e300;
    const double denorm = t == at::kHalf ? 1.0e-7 : t == at::kBFloat16 ? 1.0e-39 : t == at::kFloat ? 1.0e-40 : 1.0e-310;
    switch (std::uniform_int_distribution<int>(0, 6)(rng)) {
      case 0: return std::numeric_limits<double>::quiet_NaN();
      case 1: return std::numeric_limits<double>::infinity();
      case 2: return -std::numeric_limits<double>::infinity();
      case 3: return -0.0;
      case 4: return denorm * (uniform() < 0.5 ? -1 : 1);
      case 5: return huge * (uniform() < 0.5 ? -1 : 1);
      default: return std::numeric_limits<double>::quiet_NaN();
    }
  }

  // Fills a contiguous 1-d storage of n elements of dtype t.
  at::Tensor storage(int64_t n, c10::ScalarType t) {
    at::Tensor d = at::empty({n}, at::kDouble);
    double* p = d.data_ptr<double>();
    if (c10::isIntegralType(t, /*includeBool=*/true)) {
      if (t == at::kBool) {
        for (int64_t i = 0; i < n; ++i) p[i] = uniform() < 0.5 ? 1 : 0;
      } else {
        const int lo = t == at::kByte || family == ValueFamily::Positive ? 0 : -100;
        std::uniform_int_distribution<int> dist(lo, 100);
        for (int64_t i = 0; i < n; ++i) p[i] = dist(rng);
      }
      return d.to(t);
    }
    for (int64_t i = 0; i < n; ++i) p[i] = real_value();
    if (family == ValueFamily::Special) {
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

  at::Tensor tensor(const trace::TensorSpec& spec) {
    c10::ScalarType t;
    if (!dtype_from_short(spec.dtype, &t)) throw std::runtime_error("unknown dtype '" + spec.dtype + "' in sample");
    for (int64_t s : spec.shape)
      if (s < 0) throw std::runtime_error("negative size in sample shape");
    if (!spec.has_strides) {
      int64_t n = 1;
      for (int64_t s : spec.shape) n *= s;
      return storage(n, t).view(spec.shape);
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
    return storage(empty ? 0 : span, t).as_strided(spec.shape, spec.strides, 0);
  }
};

[[noreturn]] void type_error(const c10::Argument& a, const trace::Value& v, const std::string& why) {
  throw std::runtime_error("argument '" + a.name() + "' (" + a.real_type()->str() + "): " + why + ", got " + trace::format_value(v));
}

int64_t dtype_code(const c10::Argument& a, const trace::Value& v) {
  std::string s = v.s;
  if (s.rfind("torch.", 0) == 0) s = s.substr(6);
  static const std::pair<const char*, c10::ScalarType> names[] = {
      {"float16", at::kHalf}, {"half", at::kHalf}, {"bfloat16", at::kBFloat16}, {"float32", at::kFloat},
      {"float", at::kFloat}, {"float64", at::kDouble}, {"double", at::kDouble}, {"int64", at::kLong},
      {"long", at::kLong}, {"int32", at::kInt}, {"int", at::kInt}, {"int16", at::kShort}, {"int8", at::kChar},
      {"uint8", at::kByte}, {"bool", at::kBool}, {"complex64", at::kComplexFloat}, {"complex128", at::kComplexDouble}};
  for (const auto& [n, t] : names)
    if (s == n) return static_cast<int64_t>(t);
  c10::ScalarType t;
  if (dtype_from_short(s, &t)) return static_cast<int64_t>(t);
  type_error(a, v, "unknown dtype");
}

c10::IValue convert(const c10::Argument& a, const c10::TypePtr& type, const trace::Value& v, Drawer& draw) {
  using K = trace::Value::Kind;
  switch (type->kind()) {
    case c10::TypeKind::OptionalType:
      if (v.kind == K::None) return c10::IValue();
      return convert(a, type->castRaw<c10::OptionalType>()->getElementType(), v, draw);
    case c10::TypeKind::TensorType:
      if (v.kind != K::Tensor) type_error(a, v, "expected a tensor");
      return draw.tensor(v.tensor);
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

}  // namespace

std::vector<c10::IValue> make_inputs(const c10::FunctionSchema& schema, const Sample& sample, std::mt19937_64& rng) {
  Drawer draw{rng, sample.family};
  const auto& args = schema.arguments();
  if (sample.call.args.size() > args.size())
    throw std::runtime_error(sample.op + ": sample has " + std::to_string(sample.call.args.size()) + " positional arguments, the schema takes " +
                             std::to_string(args.size()));
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
  return out;
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

std::string trait_names(unsigned traits) {
  static const std::pair<InputTrait, const char*> names[] = {
      {InputTrait::SpecialValues, "special_values"}, {InputTrait::Broadcasting, "broadcasting"},
      {InputTrait::NonContiguous, "non_contiguous"}, {InputTrait::LowPrecision, "dtype"},
      {InputTrait::LargeSize, "large_sizes"},        {InputTrait::EmptyOrScalar, "empty_or_0d"}};
  std::string out;
  for (const auto& [bit, name] : names)
    if (traits & static_cast<unsigned>(bit)) out += (out.empty() ? "" : ",") + std::string(name);
  return out;
}

}  // namespace kg::harness

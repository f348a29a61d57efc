// The shared vocabulary (names.h): parsing and printing op overload names, devices and dtypes.
#include "kernelgate/names.h"

#include <stdexcept>

namespace kg::names {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// A name or overload: letters, digits and '_', at least one.
bool valid_part(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace

// ---- op overload names ----------------------------------------------------------------------

std::optional<std::string_view> in_dispatcher_namespace(std::string_view qualified) {
  if (!starts_with(qualified, kDispatcherNamespace)) return std::nullopt;
  return qualified.substr(kDispatcherNamespace.size());
}

std::optional<std::string_view> in_trace_namespace(std::string_view qualified) {
  if (!starts_with(qualified, kTraceNamespace)) return std::nullopt;
  return qualified.substr(kTraceNamespace.size());
}

std::string folder_spelling(std::string_view op) {
  std::string out;
  for (char c : op) {
    if (c == '.') out += "__";
    else out += c;
  }
  return out;
}

std::optional<std::string_view> without_aten_prefix(std::string_view spelling) {
  for (std::string_view prefix : {kDispatcherNamespace, kTraceNamespace})
    if (starts_with(spelling, prefix)) return spelling.substr(prefix.size());
  return std::nullopt;
}

std::optional<OpName> OpName::try_parse(std::string_view spelling) {
  std::string_view rest = without_aten_prefix(spelling).value_or(spelling);
  const size_t dot = rest.find('.');
  const std::string_view name = rest.substr(0, dot);
  const std::string_view overload = dot == std::string_view::npos ? kDefaultOverload : rest.substr(dot + 1);
  if (!valid_part(name) || !valid_part(overload)) return std::nullopt;
  return OpName(std::string(name), std::string(overload));
}

std::optional<OpName> OpName::try_parse_unqualified(std::string_view spelling) {
  if (without_aten_prefix(spelling)) return std::nullopt;
  return try_parse(spelling);
}

OpName OpName::parse(std::string_view spelling) {
  if (auto op = try_parse(spelling)) return *op;
  throw std::invalid_argument("'" + std::string(spelling) +
                              "' is not an op overload name: expected NAME.OVERLOAD (add.Tensor, relu.default), "
                              "optionally after aten:: or aten., or the dispatcher's aten::NAME for the default overload");
}

std::optional<OpName> OpName::from_folder(std::string_view folder) {
  const size_t sep = folder.rfind("__");
  if (sep == std::string_view::npos || sep == 0 || sep + 2 >= folder.size()) return std::nullopt;
  const std::string_view name = folder.substr(0, sep), overload = folder.substr(sep + 2);
  if (!valid_part(name) || !valid_part(overload)) return std::nullopt;
  return OpName(std::string(name), std::string(overload));
}

std::optional<OpName> OpName::from_dispatcher(std::string_view name, std::string_view overload) {
  const auto unqualified = in_dispatcher_namespace(name);
  if (!unqualified || !valid_part(*unqualified)) return std::nullopt;
  if (overload.empty()) overload = kDefaultOverload;
  if (!valid_part(overload)) return std::nullopt;
  return OpName(std::string(*unqualified), std::string(overload));
}

std::string OpName::base() const {
  std::string b = name_;
  while (!b.empty() && b.back() == '_') b.pop_back();
  return b;
}

std::string OpName::profile() const { return name_ + "." + overload_; }
std::string OpName::trace() const { return std::string(kTraceNamespace) + profile(); }
std::string OpName::dispatcher_name() const { return std::string(kDispatcherNamespace) + name_; }
std::string OpName::dispatcher_overload() const { return overload_ == kDefaultOverload ? "" : overload_; }
std::string OpName::folder() const { return folder_spelling(profile()); }

// ---- device ---------------------------------------------------------------------------------

const char* device_name(Device d) { return d == Device::Cuda ? "cuda" : "cpu"; }

std::optional<Device> try_parse_device(std::string_view name) {
  for (Device d : {Device::Cpu, Device::Cuda})
    if (name == device_name(d)) return d;
  return std::nullopt;
}

Device parse_device(std::string_view name) {
  if (auto d = try_parse_device(name)) return *d;
  throw std::invalid_argument("unknown device '" + std::string(name) + "': expected cpu or cuda");
}

// ---- dtypes ---------------------------------------------------------------------------------

namespace {

struct DtypeNames {
  Dtype dtype;
  const char* short_name;
  const char* torch_name;
  const char* alias;
  bool floating;
};

// In Dtype's order.
constexpr DtypeNames kDtypes[] = {
    {Dtype::F16, "f16", "float16", "half", true},
    {Dtype::BF16, "bf16", "bfloat16", "", true},
    {Dtype::F32, "f32", "float32", "float", true},
    {Dtype::F64, "f64", "float64", "double", true},
    {Dtype::C32, "c32", "complex32", "chalf", true},
    {Dtype::C64, "c64", "complex64", "cfloat", true},
    {Dtype::C128, "c128", "complex128", "cdouble", true},
    {Dtype::I8, "i8", "int8", "", false},
    {Dtype::I16, "i16", "int16", "short", false},
    {Dtype::I32, "i32", "int32", "int", false},
    {Dtype::I64, "i64", "int64", "long", false},
    {Dtype::U8, "u8", "uint8", "", false},
    {Dtype::U16, "u16", "uint16", "", false},
    {Dtype::U32, "u32", "uint32", "", false},
    {Dtype::U64, "u64", "uint64", "", false},
    {Dtype::B8, "b8", "bool", "", false},
};

const DtypeNames& names_of(Dtype d) { return kDtypes[static_cast<size_t>(d)]; }

constexpr std::string_view kTorchModule = "torch.";

}  // namespace

const std::vector<Dtype>& all_dtypes() {
  static const std::vector<Dtype> all = [] {
    std::vector<Dtype> v;
    for (const auto& n : kDtypes) v.push_back(n.dtype);
    return v;
  }();
  return all;
}

std::string_view short_name(Dtype d) { return names_of(d).short_name; }
std::string_view torch_name(Dtype d) { return names_of(d).torch_name; }
std::string torch_spelling(Dtype d) { return std::string(kTorchModule) + names_of(d).torch_name; }
std::string_view torch_alias(Dtype d) { return names_of(d).alias; }
bool is_floating(Dtype d) { return names_of(d).floating; }
bool is_trace_abbreviation(Dtype d) { return d != Dtype::U16 && d != Dtype::U32 && d != Dtype::U64; }

std::optional<Dtype> try_parse_short_dtype(std::string_view name) {
  for (const auto& n : kDtypes)
    if (name == n.short_name) return n.dtype;
  return std::nullopt;
}

std::optional<Dtype> try_parse_torch_dtype(std::string_view name) {
  if (starts_with(name, kTorchModule)) name.remove_prefix(kTorchModule.size());
  if (name.empty()) return std::nullopt;
  for (const auto& n : kDtypes)
    if (name == n.torch_name || name == n.alias) return n.dtype;
  return std::nullopt;
}

Dtype parse_dtype(std::string_view name) {
  if (auto d = try_parse_short_dtype(name)) return *d;
  if (auto d = try_parse_torch_dtype(name)) return *d;
  std::string shorts;
  for (const auto& n : kDtypes) shorts += (shorts.empty() ? "" : ", ") + std::string(n.short_name);
  throw std::invalid_argument("unknown dtype '" + std::string(name) + "': expected a short name (" + shorts +
                              ") or a torch name (float32, torch.float32, half, ...)");
}

}  // namespace kg::names

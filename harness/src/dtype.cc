#include "kernelgate/harness.h"

#include <utility>

namespace kg::harness {
namespace {
using names::Dtype;
const std::pair<Dtype, c10::ScalarType> kScalarTypes[] = {
    {Dtype::F16, c10::ScalarType::Half},
    {Dtype::BF16, c10::ScalarType::BFloat16},
    {Dtype::F32, c10::ScalarType::Float},
    {Dtype::F64, c10::ScalarType::Double},
    {Dtype::I64, c10::ScalarType::Long},
    {Dtype::I32, c10::ScalarType::Int},
    {Dtype::I16, c10::ScalarType::Short},
    {Dtype::I8, c10::ScalarType::Char},
    {Dtype::U8, c10::ScalarType::Byte},
    {Dtype::B8, c10::ScalarType::Bool},
    {Dtype::C32, c10::ScalarType::ComplexHalf},
    {Dtype::C64, c10::ScalarType::ComplexFloat},
    {Dtype::C128, c10::ScalarType::ComplexDouble},
};
}  // namespace

std::optional<c10::ScalarType> scalar_type_of(Dtype d) {
  for (const auto& [dtype, t] : kScalarTypes)
    if (dtype == d) return t;
  return std::nullopt;
}

std::optional<Dtype> dtype_of(c10::ScalarType t) {
  for (const auto& [dtype, st] : kScalarTypes)
    if (st == t) return dtype;
  return std::nullopt;
}

bool dtype_from_short(const std::string& s, c10::ScalarType* out) {
  const auto d = names::try_parse_short_dtype(s);
  const auto t = d ? scalar_type_of(*d) : std::nullopt;
  if (t) *out = *t;
  return t.has_value();
}

std::string short_dtype(c10::ScalarType t) {
  if (const auto d = dtype_of(t)) return std::string(names::short_name(*d));
  return c10::toString(t);
}

const char* family_name(ValueFamily f) {
  switch (f) {
    case ValueFamily::Normal: return "normal";
    case ValueFamily::Special: return "special";
    case ValueFamily::Positive: return "positive";
  }
  return "?";
}

}  // namespace kg::harness

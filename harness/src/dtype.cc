#include "kernelgate/harness.h"

#include <utility>

namespace kg::harness {
namespace {
const std::pair<const char*, c10::ScalarType> kDtypes[] = {
    {"f16", c10::ScalarType::Half},        {"bf16", c10::ScalarType::BFloat16},
    {"f32", c10::ScalarType::Float},       {"f64", c10::ScalarType::Double},
    {"i64", c10::ScalarType::Long},        {"i32", c10::ScalarType::Int},
    {"i16", c10::ScalarType::Short},       {"i8", c10::ScalarType::Char},
    {"u8", c10::ScalarType::Byte},         {"b8", c10::ScalarType::Bool},
    {"c32", c10::ScalarType::ComplexHalf}, {"c64", c10::ScalarType::ComplexFloat},
    {"c128", c10::ScalarType::ComplexDouble},
};
}  // namespace

bool dtype_from_short(const std::string& s, c10::ScalarType* out) {
  for (const auto& [name, t] : kDtypes)
    if (s == name) {
      *out = t;
      return true;
    }
  return false;
}

std::string short_dtype(c10::ScalarType t) {
  for (const auto& [name, st] : kDtypes)
    if (st == t) return name;
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

// The C++ signature of an aten overload, as the dispatcher calls an unboxed kernel.
#include "kernelgate/loader.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <sstream>
#include <stdexcept>

namespace kg::loader {
namespace {

bool is_write(const c10::Argument& a) { return a.alias_info() && a.alias_info()->isWrite(); }

std::string optional_of(const c10::TypePtr& elem, const std::string& what) {
  switch (elem->kind()) {
    case c10::TypeKind::TensorType: return "const c10::optional<at::Tensor>&";
    case c10::TypeKind::IntType: return "c10::optional<int64_t>";
    case c10::TypeKind::SymIntType: return "c10::optional<int64_t>";
    case c10::TypeKind::FloatType: return "c10::optional<double>";
    case c10::TypeKind::BoolType: return "c10::optional<bool>";
    case c10::TypeKind::NumberType: return "const c10::optional<at::Scalar>&";
    case c10::TypeKind::ScalarTypeType: return "c10::optional<at::ScalarType>";
    case c10::TypeKind::LayoutType: return "c10::optional<at::Layout>";
    case c10::TypeKind::MemoryFormatType: return "c10::optional<at::MemoryFormat>";
    case c10::TypeKind::DeviceObjType: return "c10::optional<at::Device>";
    case c10::TypeKind::GeneratorType: return "c10::optional<at::Generator>";
    case c10::TypeKind::StringType: return "c10::optional<c10::string_view>";
    case c10::TypeKind::ListType: {
      auto inner = elem->castRaw<c10::ListType>()->getElementType();
      if (inner->kind() == c10::TypeKind::IntType || inner->kind() == c10::TypeKind::SymIntType) return "at::OptionalIntArrayRef";
      if (inner->kind() == c10::TypeKind::FloatType) return "c10::optional<at::ArrayRef<double>>";
      break;
    }
    default: break;
  }
  throw std::runtime_error("kernelgate cannot express the C++ type of optional " + elem->str() + " (" + what + ")");
}

std::string arg_type(const c10::Argument& a) {
  const c10::TypePtr& t = a.real_type();
  switch (t->kind()) {
    case c10::TypeKind::TensorType: return is_write(a) ? "at::Tensor&" : "const at::Tensor&";
    case c10::TypeKind::IntType: return "int64_t";
    case c10::TypeKind::SymIntType: return "int64_t";
    case c10::TypeKind::FloatType: return "double";
    case c10::TypeKind::BoolType: return "bool";
    case c10::TypeKind::NumberType: return "const at::Scalar&";
    case c10::TypeKind::StringType: return "c10::string_view";
    case c10::TypeKind::ScalarTypeType: return "at::ScalarType";
    case c10::TypeKind::LayoutType: return "at::Layout";
    case c10::TypeKind::MemoryFormatType: return "at::MemoryFormat";
    case c10::TypeKind::DeviceObjType: return "at::Device";
    case c10::TypeKind::OptionalType: return optional_of(t->castRaw<c10::OptionalType>()->getElementType(), a.name());
    case c10::TypeKind::ListType: {
      auto inner = t->castRaw<c10::ListType>()->getElementType();
      switch (inner->kind()) {
        case c10::TypeKind::IntType:
        case c10::TypeKind::SymIntType: return "at::IntArrayRef";
        case c10::TypeKind::FloatType: return "at::ArrayRef<double>";
        case c10::TypeKind::TensorType: return "at::TensorList";
        case c10::TypeKind::NumberType: return "at::ArrayRef<at::Scalar>";
        case c10::TypeKind::BoolType:
          if (a.N()) return "::std::array<bool," + std::to_string(*a.N()) + ">";
          break;
        case c10::TypeKind::OptionalType:
          if (inner->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::TensorType)
            return "const c10::List<c10::optional<at::Tensor>>&";
          break;
        default: break;
      }
      break;
    }
    default: break;
  }
  throw std::runtime_error("kernelgate cannot express the C++ type of argument '" + a.name() + "' (" + t->str() + ")");
}

std::string return_type_of(const c10::Argument& r) {
  const c10::TypePtr& t = r.real_type();
  switch (t->kind()) {
    case c10::TypeKind::TensorType: return is_write(r) ? "at::Tensor&" : "at::Tensor";
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: return "int64_t";
    case c10::TypeKind::FloatType: return "double";
    case c10::TypeKind::BoolType: return "bool";
    case c10::TypeKind::NumberType: return "at::Scalar";
    case c10::TypeKind::ScalarTypeType: return "at::ScalarType";
    case c10::TypeKind::ListType:
      if (t->castRaw<c10::ListType>()->getElementType()->kind() == c10::TypeKind::TensorType) return "::std::vector<at::Tensor>";
      break;
    default: break;
  }
  throw std::runtime_error("kernelgate cannot express the C++ type of a return (" + t->str() + ")");
}

}  // namespace

Signature cpp_signature(const c10::FunctionSchema& schema) {
  Signature s;
  const auto& rets = schema.returns();
  if (rets.empty()) {
    s.return_type = "void";
  } else if (rets.size() == 1) {
    s.return_type = return_type_of(rets[0]);
  } else {
    std::string t = "::std::tuple<";
    for (size_t i = 0; i < rets.size(); ++i) t += (i ? "," : "") + return_type_of(rets[i]);
    s.return_type = t + ">";
  }
  for (const auto& a : schema.arguments()) {
    s.arg_types.push_back(arg_type(a));
    s.arg_names.push_back(a.name());
  }
  return s;
}

std::string Signature::declaration(const std::string& fn_name) const {
  std::ostringstream o;
  o << return_type << " " << fn_name << "(";
  for (size_t i = 0; i < arg_types.size(); ++i) o << (i ? ", " : "") << arg_types[i] << " " << arg_names[i];
  o << ")";
  return o.str();
}

std::string registered_schema(const c10::FunctionSchema& schema, const std::string& folder) {
  std::ostringstream o;
  o << schema;
  std::string text = o.str();
  auto paren = text.find('(');
  if (paren == std::string::npos) throw std::runtime_error("unexpected schema text: " + text);
  return folder + text.substr(paren);
}

const c10::FunctionSchema& aten_schema(const std::string& op) {
  // "relu.default" or a bare "relu" (the default overload); not the aten::/aten. spellings.
  const auto name = names::OpName::try_parse_unqualified(op);
  auto handle = name ? c10::Dispatcher::singleton().findSchema({name->dispatcher_name(), name->dispatcher_overload()}) : c10::nullopt;
  if (!handle) throw std::runtime_error("no aten overload named '" + op + "' in the linked libtorch");
  return handle->schema();
}

}  // namespace kg::loader

#include "kernelgate/loader.h"

#include <ATen/ATen.h>

#include <cstring>

namespace kg::loader {
namespace {

// Fresh storage covering exactly the tensor's element span, same sizes and strides.
at::Tensor clone_exact(const at::Tensor& t) {
  if (!t.defined()) return t;
  if (t.numel() == 0) return at::empty_strided(t.sizes(), t.strides(), t.options());
  int64_t span = 1;
  for (int64_t d = 0; d < t.dim(); ++d) span += (t.size(d) - 1) * t.stride(d);
  at::Tensor storage = at::empty({span}, t.options());
  if (t.is_cpu()) {
    std::memcpy(storage.data_ptr(), t.data_ptr(), static_cast<size_t>(span) * t.element_size());
  } else {
    storage.copy_(t.as_strided({span}, {1}));
  }
  return storage.as_strided(t.sizes(), t.strides(), 0);
}

c10::IValue clone_value(const c10::IValue& v) {
  if (v.isTensor()) return clone_exact(v.toTensor());
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList()) out.push_back(clone_exact(t));
    return c10::IValue(out);
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> elems;
    for (const auto& e : v.toTupleRef().elements()) elems.push_back(clone_value(e));
    return c10::ivalue::Tuple::create(std::move(elems));
  }
  if (v.isList() && !v.isIntList() && !v.isDoubleList() && !v.isBoolList()) {
    auto l = v.toList();
    c10::impl::GenericList out(l.elementType());
    for (size_t i = 0; i < l.size(); ++i) out.push_back(clone_value(l.get(i)));
    return c10::IValue(out);
  }
  return v;  // immutable scalars and lists of scalars
}

}  // namespace

std::vector<c10::IValue> clone_values(const std::vector<c10::IValue>& values) {
  std::vector<c10::IValue> out;
  out.reserve(values.size());
  for (const auto& v : values) out.push_back(clone_value(v));
  return out;
}

}  // namespace kg::loader

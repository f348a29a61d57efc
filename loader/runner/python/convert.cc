// IValue <-> Python: see convert.h.
#include <torch/csrc/python_headers.h>

#include "convert.h"

#include <torch/csrc/Device.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/Layout.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/tensor_memoryformats.h>

#include <stdexcept>

namespace kg::runner::python {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& why) { throw std::runtime_error(what + ": " + why); }

PyRef checked(PyObject* o, const std::string& what) {
  if (!o) {
    PyErr_Clear();
    fail(what, "could not be converted to Python");
  }
  return PyRef::steal(o);
}

PyRef list_to_python(const c10::IValue& v, const c10::TypePtr& elem, const std::string& what) {
  if (!v.isList()) fail(what, "expected a list");
  const auto& items = v.toListRef();
  PyRef list = checked(PyList_New(static_cast<Py_ssize_t>(items.size())), what);
  for (size_t i = 0; i < items.size(); ++i)
    PyList_SET_ITEM(list.get(), static_cast<Py_ssize_t>(i), to_python(items[i], elem, what + "[" + std::to_string(i) + "]").release());
  return list;
}

PyRef scalar_to_python(const c10::IValue& v, const std::string& what) {
  if (v.isBool()) return PyRef::borrow(v.toBool() ? Py_True : Py_False);
  if (v.isInt()) return checked(PyLong_FromLongLong(v.toInt()), what);
  if (v.isDouble()) return checked(PyFloat_FromDouble(v.toDouble()), what);
  if (v.isComplexDouble()) {
    const c10::complex<double> c = v.toComplexDouble();
    return checked(PyComplex_FromDoubles(c.real(), c.imag()), what);
  }
  fail(what, "a number of an unexpected kind (" + v.tagKind() + ")");
}

const at::Tensor& unpack_tensor(PyObject* o, const std::string& what) {
  if (!THPVariable_CheckExact(o)) fail(what, std::string("returned a ") + Py_TYPE(o)->tp_name + ", expected a torch.Tensor (no subclass)");
  return THPVariable_Unpack(o);
}

int64_t unpack_int(PyObject* o, const std::string& what) {
  if (PyBool_Check(o) || !PyLong_Check(o)) fail(what, std::string("returned a ") + Py_TYPE(o)->tp_name + ", expected an int");
  const long long n = PyLong_AsLongLong(o);
  if (n == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    fail(what, "an int out of range");
  }
  return n;
}

}  // namespace

PyRef to_python(const c10::IValue& v, const c10::TypePtr& type, const std::string& what) {
  switch (type->kind()) {
    case c10::TypeKind::OptionalType:
      if (v.isNone()) return PyRef::borrow(Py_None);
      return to_python(v, type->expectRef<c10::OptionalType>().getElementType(), what);
    case c10::TypeKind::TensorType:
      if (!v.isTensor()) fail(what, "expected a tensor");
      return checked(THPVariable_Wrap(v.toTensor()), what);
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
      if (!v.isInt()) fail(what, "expected an int");
      return checked(PyLong_FromLongLong(v.toInt()), what);
    case c10::TypeKind::FloatType:
      if (!v.isDouble()) fail(what, "expected a float");
      return checked(PyFloat_FromDouble(v.toDouble()), what);
    case c10::TypeKind::BoolType:
      if (!v.isBool()) fail(what, "expected a bool");
      return PyRef::borrow(v.toBool() ? Py_True : Py_False);
    case c10::TypeKind::NumberType: return scalar_to_python(v, what);
    case c10::TypeKind::StringType:
      if (!v.isString()) fail(what, "expected a str");
      return checked(PyUnicode_FromStringAndSize(v.toStringRef().data(), static_cast<Py_ssize_t>(v.toStringRef().size())), what);
    case c10::TypeKind::ListType: return list_to_python(v, type->expectRef<c10::ListType>().getElementType(), what);
    case c10::TypeKind::ScalarTypeType:
      if (!v.isInt()) fail(what, "expected a dtype");
      return PyRef::borrow(reinterpret_cast<PyObject*>(torch::getTHPDtype(static_cast<at::ScalarType>(v.toInt()))));
    case c10::TypeKind::LayoutType:
      if (!v.isInt()) fail(what, "expected a layout");
      return PyRef::borrow(reinterpret_cast<PyObject*>(torch::getTHPLayout(static_cast<at::Layout>(v.toInt()))));
    case c10::TypeKind::MemoryFormatType:
      if (!v.isInt()) fail(what, "expected a memory format");
      return PyRef::borrow(torch::utils::getTHPMemoryFormat(static_cast<at::MemoryFormat>(v.toInt())));
    case c10::TypeKind::DeviceObjType:
      if (!v.isDevice()) fail(what, "expected a device");
      return checked(THPDevice_New(v.toDevice()), what);
    default: fail(what, "the python kind does not pass arguments of type " + type->str() + " yet");
  }
}

c10::IValue from_python(PyObject* o, const c10::TypePtr& type, const std::string& what) {
  switch (type->kind()) {
    case c10::TypeKind::OptionalType:
      if (o == Py_None) return c10::IValue();
      return from_python(o, type->expectRef<c10::OptionalType>().getElementType(), what);
    case c10::TypeKind::TensorType: return unpack_tensor(o, what);
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: return unpack_int(o, what);
    case c10::TypeKind::FloatType:
      if (PyFloat_Check(o)) return PyFloat_AS_DOUBLE(o);
      return static_cast<double>(unpack_int(o, what));
    case c10::TypeKind::BoolType:
      if (!PyBool_Check(o)) fail(what, std::string("returned a ") + Py_TYPE(o)->tp_name + ", expected a bool");
      return o == Py_True;
    case c10::TypeKind::NumberType:
      if (PyBool_Check(o)) return o == Py_True;
      if (PyFloat_Check(o)) return PyFloat_AS_DOUBLE(o);
      return unpack_int(o, what);
    case c10::TypeKind::ListType: {
      if (type->expectRef<c10::ListType>().getElementType()->kind() != c10::TypeKind::TensorType)
        fail(what, "the python kind does not return " + type->str() + " yet");
      if (!PyList_Check(o) && !PyTuple_Check(o))
        fail(what, std::string("returned a ") + Py_TYPE(o)->tp_name + ", expected a list of tensors");
      PyRef items = PyRef::steal(PySequence_Fast(o, "a list of tensors"));
      if (!items) {
        PyErr_Clear();
        fail(what, "expected a list of tensors");
      }
      c10::List<at::Tensor> out;
      const Py_ssize_t n = PySequence_Fast_GET_SIZE(items.get());
      for (Py_ssize_t i = 0; i < n; ++i)
        out.push_back(unpack_tensor(PySequence_Fast_GET_ITEM(items.get(), i), what + "[" + std::to_string(i) + "]"));
      return out;
    }
    default: fail(what, "the python kind does not return " + type->str() + " yet");
  }
}

}  // namespace kg::runner::python

// Values between the dispatcher's stack and Python, by the schema's types: tensors are torch's own
// Python tensors over the same storage (torch/csrc's THPVariable_Wrap and THPVariable_Unpack), so an
// in-place kernel writes the runner's buffers. Throws std::runtime_error naming the value.
#pragma once

#include "py_ref.h"

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

#include <string>

namespace kg::runner::python {

// The Python object for an argument of type `type` (Argument::real_type(): ScalarType, Layout,
// MemoryFormat and Device become torch.dtype, torch.layout, torch.memory_format, torch.device).
PyRef to_python(const c10::IValue& v, const c10::TypePtr& type, const std::string& what);

// A kernel's return as the schema's `type`: a Tensor must be a plain torch.Tensor (no subclass:
// its methods would run Python again wherever the runner touches it).
c10::IValue from_python(PyObject* o, const c10::TypePtr& type, const std::string& what);

}  // namespace kg::runner::python

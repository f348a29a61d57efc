// The runner's half of load_inline (kernelgate/inline_extension.h): the two built-in functions the
// interpreter's own torch.utils.cpp_extension calls, and what they recorded.
//
//   load(key)        dlopens kgext-<key>.so from the folder the source was staged in, when the
//                    supervisor staged it there (its static initialisers register the ops); True
//                    when loaded, False when there is no such file. `key` must be 64 hex digits,
//                    so no other file of the box can be named.
//   request(fields)  records a call that found no library (the eight fields, as text), when the
//                    source's load takes requests (a KernelBench solution's first runner); False
//                    otherwise, and load_inline then refuses with kCppExtensionRefused.
#pragma once

#include "py_ref.h"

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace kg::runner::python {

// Before a source runs: where its libraries are staged, and whether its calls are recorded.
void set_inline_extension_source(const std::string& source_path, bool take_requests);

// The two functions as Python callables (for the interpreter's prelude). The GIL must be held.
PyRef inline_extension_load_function();
PyRef inline_extension_request_function();

// The recorded calls for the supervisor (protocol::ModelAction::Extensions): an int64 tensor
// holding their count, then each call's eight fields as uint8 tensors of their UTF-8 bytes.
std::vector<at::Tensor> inline_extension_requests();

}  // namespace kg::runner::python

// Whether a call's returns share storage with its arguments the way the schema says.
#pragma once

#include <ATen/core/function_schema.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kg::harness {

// `got[i]`: the argument the candidate's return i shares storage with, or protocol::kAlias*
// (the runner's report); `ref[i]`: the same for the reference's call. A return annotated
// Tensor(a!) must be the argument annotated (a!); a return with no annotation must alias no
// argument unless the reference's does too (aten::_unsafe_view); other annotations (views:
// Tensor(a)) may go either way. The first violation, said plainly, or nothing.
std::optional<std::string> aliasing_mismatch(const c10::FunctionSchema& schema, const std::vector<int32_t>& got,
                                             const std::vector<int32_t>& ref);

}  // namespace kg::harness

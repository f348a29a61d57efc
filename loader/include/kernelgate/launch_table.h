// The supervisor's reading of the nvrtc kind's launch table from the op folder's kernelgate.toml:
//
//   [launch]                                   # or [[launch]] several times: launched in order
//   kernel = "relu_kernel"                     # extern "C" name, or a name expression "relu<float>"
//   # kernel = { float32 = "relu_f32", float16 = "relu_f16" }   by the first tensor input's dtype
//   grid   = ["ceil_div(numel(self), 256)"]    # 1 to 3 expressions (or one string / integer)
//   block  = [256]                             # 1 to 3; product at most 1024
//   shared_mem = 0                             # dynamic shared memory bytes (expression)
//   args   = ["self", "out0", "numel(self)"]   # kernel parameters, in order
//   contiguous_inputs = true                   # tensors are made contiguous before the launch (default)
//
// The expression language, the Table both sides hold and its text form for kg-runner are the
// protocol's (kernelgate/launch.h); this reader checks every name against the overload's schema.
#pragma once

#include "kernelgate/launch.h"

#include <ATen/core/function_schema.h>

#include <string>

namespace kg::loader::launch {

// The protocol's launch table, under the names the supervisor has always used.
using protocol::launch::Error;
using protocol::launch::Launch;
using protocol::launch::Table;
using protocol::launch::to_text;

// Reads `toml_path` ([launch] or [[launch]]); names are checked against the overload's
// arguments and out0..out{n-1}. `display_path` is what errors call the file.
Table parse_file(const std::string& toml_path, const std::string& display_path, const c10::FunctionSchema& schema);
// Same, from text.
Table parse_text(const std::string& text, const std::string& display_path, const c10::FunctionSchema& schema);

}  // namespace kg::loader::launch

// A submitted Python file executed as a fresh module in the runner's interpreter: the python
// kind's op source and KernelBench's problem and solution files alike.
#pragma once

#include "py_ref.h"

#include <string>

namespace kg::runner::python {

inline constexpr size_t kTracebackBytes = 3000;

// The file, read whole (it is the artifact: a copy kernelgate made, in the runner's read-only
// staging folder). Throws std::runtime_error naming the path.
std::string read_source(const std::string& path);

// The name tracebacks show for `path`: the file's own name, never the box's folders.
std::string shown_name(const std::string& path);

// Compiles `source` as `file` and executes it in a new module named `module_name`; returns the
// module's globals. Tracebacks quote the source (linecache is filled, Python never looks for the
// file). Throws std::runtime_error with the traceback. The GIL must be held.
PyRef execute_module(const std::string& source, const std::string& file, const char* module_name);

}  // namespace kg::runner::python

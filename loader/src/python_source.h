// The python kind's "build": no compiler runs. The source is checked here (size, text) and
// published through the cache as the artifact; kg-runner's embedded interpreter compiles and runs
// it inside the run sandbox, where a syntax error or an exception at import becomes the load's
// error with its traceback (docs/loader.md, "The python kind").
#pragma once

#include "build_plan.h"
#include "kernelgate/loader.h"

#include <string>

namespace kg::loader {

// The most a python source may hold (kg-runner reads no more).
inline constexpr size_t kMaxPythonSourceBytes = 4u << 20;

// The plan that publishes `source` as the artifact `src_name`. Throws std::runtime_error naming
// `shown` ("relu__default/relu__default_implementation.py") when the source is over the size
// limit, holds a NUL byte or is not UTF-8 (what Python reads a source file as).
Plan plan_python(const OpFolder& op, const std::string& shown, const std::string& src_name, const std::string& source);

}  // namespace kg::loader

// Built-in suites: tables of sample specs in trace syntax, parsed once.
#pragma once

#include "kernelgate/harness.h"

#include <vector>

namespace kg::harness {

struct SampleSpec {
  const char* op;
  const char* spec;     // "((args...), {kwargs...})"
  ValueFamily family;
  const char* label;
  unsigned traits;
};

const std::vector<SampleSpec>& smoke_specs();

}  // namespace kg::harness

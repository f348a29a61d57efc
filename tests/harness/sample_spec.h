// A Sample from an op name and a call in trace syntax, for the harness's unit tests.
#pragma once

#include "kernelgate/harness.h"

#include <string>

namespace kg::harness::test {

inline Sample sample(const std::string& op, const std::string& spec, ValueFamily f = ValueFamily::Normal) {
  Sample s;
  s.op = op;
  s.call = kg::trace::parse_call(spec);
  s.family = f;
  return s;
}

}  // namespace kg::harness::test

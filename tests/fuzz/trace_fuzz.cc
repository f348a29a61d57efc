// libFuzzer target for the trace parser (harness/src/trace_parser.cc, trace_format.cc).
//
// Every input goes through parse_trace and parse_call. Whatever parses must survive the canonical
// round trip: parse(format(parse(x))) is structurally parse(x), and formatting is idempotent.
// Anything other than a ParseError escaping the parser is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernelgate/trace.h"

namespace {

[[noreturn]] void die(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "trace_fuzz: %s\n--- first:\n%s\n--- second:\n%s\n", what, a.c_str(), b.c_str());
  std::abort();
}

void check_call(const kg::trace::Call& c) {
  using namespace kg::trace;
  const std::string text = format_call(c);
  Call again;
  try {
    again = parse_call(text, "<formatted>");
  } catch (const ParseError& e) { die("formatted call does not parse", text, e.what()); }
  if (!same_call(c, again)) die("call round trip changed the call", text, format_call(again));
  const std::string text2 = format_call(again);
  if (text2 != text) die("format_call is not idempotent", text, text2);
  // Values render alone as well.
  for (const auto& v : c.args) {
    const std::string one = "((" + format_value(v) + ",), {})";
    Call c1;
    try {
      c1 = parse_call(one, "<value>");
    } catch (const ParseError& e) { die("formatted value does not parse", one, e.what()); }
    if (c1.args.size() != 1 || !same_value(c1.args[0], v)) die("value round trip changed the value", one, format_call(c1));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kg::trace;
  const std::string input(reinterpret_cast<const char*>(data), size);

  try {
    auto ops = parse_trace(input, "<fuzz>");
    const std::string text = format_trace(ops);
    std::vector<OperatorEntry> again;
    try {
      again = parse_trace(text, "<formatted>");
    } catch (const ParseError& e) { die("formatted trace does not parse", text, e.what()); }
    if (!same_trace(ops, again)) die("trace round trip changed the trace", text, format_trace(again));
    for (const auto& op : ops)
      for (const auto& c : op.calls) check_call(c);
  } catch (const ParseError&) {}

  try {
    Call c = parse_call(input, "<fuzz>");
    check_call(c);
  } catch (const ParseError&) {}
  return 0;
}

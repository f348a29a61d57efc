// The python kind's plan: see python_source.h.
#include "python_source.h"

#include <stdexcept>

namespace kg::loader {
namespace {

// The offset of the first byte that does not start a well-formed UTF-8 sequence, or npos (overlong
// forms and surrogates are left to Python's own decoder, which refuses them at load).
size_t invalid_utf8_at(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : std::string::npos;
    if (n == std::string::npos || (n > 0 && i + n >= s.size())) return i;
    for (size_t k = 1; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return i;
    i += n + 1;
  }
  return std::string::npos;
}

}  // namespace

Plan plan_python(const OpFolder& op, const std::string& shown, const std::string& src_name, const std::string& source) {
  if (source.size() > kMaxPythonSourceBytes)
    throw std::runtime_error(shown + ": " + std::to_string(source.size()) + " bytes, over the " +
                             std::to_string(kMaxPythonSourceBytes >> 20) + " MiB a python source may hold");
  if (const size_t nul = source.find('\0'); nul != std::string::npos)
    throw std::runtime_error(shown + ": a NUL byte at offset " + std::to_string(nul) + "; a python source is text");
  if (const size_t bad = invalid_utf8_at(source); bad != std::string::npos)
    throw std::runtime_error(shown + ": not UTF-8 (offset " + std::to_string(bad) + "); a python source is read as UTF-8");
  Plan p;
  p.generated = {{src_name, source}};
  p.outputs = {src_name};
  p.artifact = src_name;
  p.key_text = "python source for " + op.op;
  return p;
}

}  // namespace kg::loader

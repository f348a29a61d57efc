// UTF-8 validation per RFC 3629 (no overlongs, no surrogates, nothing above U+10FFFF).
#include "kernelgate/text_safety.h"

#include <cstdint>

namespace kg::text {
namespace {

void append_escaped_byte(std::string* out, unsigned char b) {
  static const char kHex[] = "0123456789abcdef";
  *out += "\\x";
  *out += kHex[b >> 4];
  *out += kHex[b & 0xf];
}

// Length of the valid UTF-8 sequence at the start of `s` and its code point, or 0 when the
// first byte does not start one.
size_t valid_sequence(std::string_view s, uint32_t* code_point) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) {
    *code_point = b0;
    return 1;
  }
  size_t len;
  uint32_t cp;
  uint32_t min;
  if (b0 >= 0xc2 && b0 <= 0xdf) len = 2, cp = b0 & 0x1f, min = 0x80;
  else if (b0 >= 0xe0 && b0 <= 0xef) len = 3, cp = b0 & 0x0f, min = 0x800;
  else if (b0 >= 0xf0 && b0 <= 0xf4) len = 4, cp = b0 & 0x07, min = 0x10000;
  else return 0;  // a continuation byte, 0xc0/0xc1 (always overlong) or 0xf5-0xff
  if (s.size() < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  *code_point = cp;
  return len;
}

bool is_control(uint32_t cp, Newlines newlines) {
  if (cp == '\t') return false;
  if (cp == '\n') return newlines == Newlines::Escape;
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

template <typename Escape>
std::string escape_where(std::string_view bytes, bool* changed, Escape escape) {
  std::string out;
  out.reserve(bytes.size());
  bool any = false;
  while (!bytes.empty()) {
    uint32_t cp = 0;
    size_t len = valid_sequence(bytes, &cp);
    if (len == 0) {
      append_escaped_byte(&out, static_cast<unsigned char>(bytes[0]));
      any = true;
      len = 1;
    } else if (escape(cp)) {
      for (size_t i = 0; i < len; ++i) append_escaped_byte(&out, static_cast<unsigned char>(bytes[i]));
      any = true;
    } else {
      out.append(bytes.data(), len);
    }
    bytes.remove_prefix(len);
  }
  if (changed) *changed = any;
  return out;
}

}  // namespace

std::string utf8_escaped(std::string_view bytes, bool* changed) {
  return escape_where(bytes, changed, [](uint32_t) { return false; });
}

std::string terminal_safe(std::string_view bytes, Newlines newlines, bool* changed) {
  return escape_where(bytes, changed, [newlines](uint32_t cp) { return is_control(cp, newlines); });
}

}  // namespace kg::text

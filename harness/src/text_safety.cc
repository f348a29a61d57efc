// The one escaper behind every mode of text_safety.h. UTF-8 validation per RFC 3629 (no
// overlongs, no surrogates, nothing above U+10FFFF).
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

bool is_ascii_control(uint32_t cp) { return cp < 0x20 || cp == 0x7f; }

// What becomes of one character (a valid UTF-8 sequence).
struct Action {
  enum Kind { Keep, Hex, Replace } kind = Keep;  // Hex: each of its bytes as \xNN
  const char* text = nullptr;                    // Replace: what is written instead
};

// What becomes of a byte that starts no valid UTF-8 sequence.
enum class InvalidBytes { Escape, Keep };

template <typename Rule>
std::string escape_where(std::string_view bytes, InvalidBytes invalid, bool* changed, Rule rule) {
  std::string out;
  out.reserve(bytes.size());
  bool any = false;
  while (!bytes.empty()) {
    uint32_t cp = 0;
    size_t len = valid_sequence(bytes, &cp);
    const Action action = len == 0 ? Action{invalid == InvalidBytes::Escape ? Action::Hex : Action::Keep} : rule(cp);
    if (len == 0) len = 1;
    switch (action.kind) {
      case Action::Keep: out.append(bytes.data(), len); break;
      case Action::Hex:
        for (size_t i = 0; i < len; ++i) append_escaped_byte(&out, static_cast<unsigned char>(bytes[i]));
        any = true;
        break;
      case Action::Replace:
        out += action.text;
        any = true;
        break;
    }
    bytes.remove_prefix(len);
  }
  if (changed) *changed = any;
  return out;
}

Action python_escape(uint32_t cp) {
  switch (cp) {
    case '\\': return {Action::Replace, "\\\\"};
    case '\'': return {Action::Replace, "\\'"};
    case '\n': return {Action::Replace, "\\n"};
    case '\r': return {Action::Replace, "\\r"};
    case '\t': return {Action::Replace, "\\t"};
    default: return {is_ascii_control(cp) ? Action::Hex : Action::Keep};
  }
}

}  // namespace

std::string utf8_escaped(std::string_view bytes, bool* changed) {
  return escape_where(bytes, InvalidBytes::Escape, changed, [](uint32_t) { return Action{Action::Keep}; });
}

std::string terminal_safe(std::string_view bytes, Newlines newlines, bool* changed) {
  return escape_where(bytes, InvalidBytes::Escape, changed,
                      [newlines](uint32_t cp) { return Action{is_control(cp, newlines) ? Action::Hex : Action::Keep}; });
}

std::string python_quoted(std::string_view bytes) { return "'" + escape_where(bytes, InvalidBytes::Keep, nullptr, python_escape) + "'"; }

std::string quoted_excerpt(std::string_view text, std::size_t max_bytes) {
  const std::string shown = escape_where(text.substr(0, max_bytes), InvalidBytes::Keep, nullptr,
                                         [](uint32_t cp) { return Action{is_ascii_control(cp) ? Action::Hex : Action::Keep}; });
  return "'" + shown + (text.size() > max_bytes ? "..." : "") + "'";
}

}  // namespace kg::text

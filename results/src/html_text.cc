// Escaping and number formatting for the HTML report (html_text.h).
#include "html_text.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace kg::results::html {
namespace {

std::string hex_byte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

std::string code_point(uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u{%04X}", static_cast<unsigned>(cp));
  return buf;
}

// Marks and overrides that change the display order of the text around them.
bool is_bidi_control(uint32_t cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// The length of the valid UTF-8 sequence at s[i] and its code point; 0 when it is not one
// (a stray continuation byte, a truncated sequence, an overlong form, a surrogate, beyond U+10FFFF).
size_t utf8_sequence(const std::string& s, size_t i, uint32_t* cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t len = 0;
  uint32_t v = 0, min = 0;
  if (c >= 0xC2 && c <= 0xDF) len = 2, v = c & 0x1F, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, v = c & 0x0F, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, v = c & 0x07, min = 0x10000;
  else return 0;
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (byte(i + k) & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        case '\t':
        case '\n': out += static_cast<char>(c); break;
        default: out += c < 0x20 || c == 0x7F ? hex_byte(c) : std::string(1, static_cast<char>(c));
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t len = utf8_sequence(text, i, &cp);
    if (len == 0) {
      out += hex_byte(c);
      ++i;
    } else {
      out += (cp >= 0x80 && cp <= 0x9F) || is_bidi_control(cp) ? code_point(cp) : text.substr(i, len);
      i += len;
    }
  }
  return out;
}

std::string number(double v, int significant) {
  if (!std::isfinite(v)) return "—";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * fraction);
  return buf;
}

std::string speedup(const nlohmann::json& value) { return value.is_number() ? number(value.get<double>()) + "x" : "—"; }

std::string plain(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "—";
  if (value.is_number_integer()) return value.dump();
  if (value.is_number()) return number(value.get<double>(), 4);
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (value.is_array() && std::all_of(value.begin(), value.end(), [](const nlohmann::json& v) { return v.is_string(); })) {
    std::string joined;
    for (const auto& v : value) joined += (joined.empty() ? "" : ", ") + v.get<std::string>();
    return joined;
  }
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string field(const nlohmann::json& object, const char* key) {
  return object.is_object() && object.contains(key) ? plain(object[key]) : "";
}

const nlohmann::json& array_member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json empty = nlohmann::json::array();
  return object.is_object() && object.contains(key) && object[key].is_array() ? object[key] : empty;
}

}  // namespace kg::results::html

// Text placed in an XML document (junit.h xml_text): XML 1.0 allows no C0 control character but
// tab, newline and carriage return, and a CI viewer shows C1 ones as garbage; they are dropped.
#include "kernelgate/junit.h"

namespace kg::results {

std::string xml_text(const std::string& s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    // C1 controls are U+0080..U+009F, in UTF-8 0xC2 followed by 0x80..0x9F.
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 && static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
      ++i;
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += c; break;
      case '\n':
        if (keep_newlines) out += c;
        else out += ' ';
        break;
      default:
        if (c >= 0x20 && c != 0x7f) out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace kg::results

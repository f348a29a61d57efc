// The frame of report.html: doctype, head with the inline stylesheet, the sorting script and a
// Content-Security-Policy. Escaping keeps document text out of the markup; the policy is the second
// wall: no fetch of any kind, and no script runs but the one whose hash it names.
#include "html_text.h"
#include "report_html_parts.h"

#include "kernelgate/sha256.h"

#include <stdexcept>

namespace kg::results::html {
namespace {

std::string base64_of_hex(const std::string& hex) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (hex.size() % 2) throw std::runtime_error("report.html: digest of odd length");
  std::string bytes;
  for (size_t i = 0; i < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 2]);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? alphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? alphabet[n & 63] : '=';
  }
  return out;
}

std::string content_security_policy() {
  return "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-" +
         base64_of_hex(digest::sha256_hex(sorting_script())) + "'";
}

}  // namespace

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"" +
         content_security_policy() +
         "\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<title>" +
         escape(title) + "</title>\n<style>" + stylesheet() + "</style>\n</head>\n<body>\n" + body + "<script>" + sorting_script() +
         "</script>\n</body>\n</html>\n";
}

}  // namespace kg::results::html

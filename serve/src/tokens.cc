#include "tokens.h"

#include "kernelgate/sha256.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kg::serve {
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// Equal in time independent of where the first difference lies (both are digests of one length).
bool same(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

Tokens Tokens::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the token file");
  Tokens t;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    if (line.size() < 16) throw std::runtime_error(path + ":" + std::to_string(n) + ": a token must be at least 16 characters");
    t.digests_.push_back(digest::sha256_hex(line));
  }
  if (t.digests_.empty()) throw std::runtime_error(path + ": holds no token (one a line)");
  return t;
}

std::string Tokens::check(const std::string& authorization) const {
  static const std::string kBearer = "Bearer ";
  if (authorization.compare(0, kBearer.size(), kBearer) != 0) return "";
  const std::string d = digest::sha256_hex(trim(authorization.substr(kBearer.size())));
  bool found = false;
  for (const std::string& known : digests_) found = same(known, d) || found;
  return found ? d.substr(0, 16) : "";
}

}  // namespace kg::serve

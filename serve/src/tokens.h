// Bearer tokens from the token file: compared in constant time, known by a digest so that no
// token is ever written to a log, the database or a metric.
#pragma once

#include <string>
#include <vector>

namespace kg::serve {

class Tokens {
 public:
  // One token a line; blank lines and lines starting with '#' ignored; surrounding spaces
  // trimmed. Throws std::runtime_error naming the file when it cannot be read, holds no token, or
  // a token is shorter than 16 characters.
  static Tokens from_file(const std::string& path);
  // The token's id (first 16 hex digits of its SHA-256) when `authorization` is "Bearer TOKEN"
  // with a known TOKEN, else "".
  std::string check(const std::string& authorization) const;
  size_t size() const { return digests_.size(); }

 private:
  std::vector<std::string> digests_;  // SHA-256 hex of each token
};

}  // namespace kg::serve

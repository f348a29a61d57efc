// SHA-256 (FIPS 180-4), for the content-addressed build cache: keys and artifact checksums must
// not collide by construction, which a 64-bit FNV hash cannot promise against a submitter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kg::digest {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  void update(const std::string& s) { update(s.data(), s.size()); }
  // Adds a length-prefixed field, so ("ab","c") and ("a","bc") hash differently.
  void field(const std::string& s);
  std::string hex();  // finishes; the object must not be updated afterwards

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

std::string sha256_hex(const std::string& data);
// Hash of a file's bytes; empty string when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace kg::digest

// Helpers for the Rules* suites: building small shared objects with g++ at test time.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "kernelgate/rules.h"

namespace kg::policy::test {

// A scratch directory for one suite, removed at the end.
class Scratch {
 public:
  Scratch() {
    char tmpl[] = "/tmp/kg-rules-XXXXXX";
    const char* d = mkdtemp(tmpl);
    if (!d) throw std::runtime_error("mkdtemp failed");
    dir_ = d;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& dir() const { return dir_; }

  // Compiles `source` (C++17) into DIR/name.so with g++ -shared -fPIC plus `flags`; returns its
  // path, or "" (and a test failure carrying the compiler's output) when the build fails.
  std::string shared_object(const std::string& name, const std::string& source, const std::string& flags = "") {
    const std::string src = dir_ + "/" + name + ".cc", so = dir_ + "/" + name + ".so", log = dir_ + "/" + name + ".log";
    std::ofstream(src) << source;
    const std::string cmd = "g++ -std=c++17 -O1 -fPIC -shared " + flags + " '" + src + "' -o '" + so + "' > '" + log + "' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream in(log);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      ADD_FAILURE() << "building " << name << " failed:\n" << text;
      return "";
    }
    return so;
  }

 private:
  std::string dir_;
};

inline std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace kg::policy::test

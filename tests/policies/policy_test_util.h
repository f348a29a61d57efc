// Helpers shared by the Policy* suites.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <unistd.h>

#include "kernelgate/policy.h"

namespace kg::policy::test {

// The PolicyError message `text` gives, or a test failure when it parses.
inline std::string error_of(const std::string& text, const std::string& source = "bad.toml") {
  try {
    parse(text, source);
  } catch (const PolicyError& e) { return e.what(); }
  ADD_FAILURE() << "expected a PolicyError for:\n" << text;
  return "";
}

// Asserts that parsing `text` fails with a message containing every one of `parts`.
#define EXPECT_POLICY_ERROR(text, ...)                                                              \
  do {                                                                                              \
    const std::string msg_ = ::kg::policy::test::error_of(text);                                    \
    for (const char* part_ : std::initializer_list<const char*>{__VA_ARGS__})                       \
      EXPECT_NE(msg_.find(part_), std::string::npos) << "missing \"" << part_ << "\" in: " << msg_; \
  } while (0)

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/kg-policy-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::string path_;
};

// Sets KERNELGATE_POLICY_DIR for the scope, restoring what was there.
class PolicyDirOverride {
 public:
  explicit PolicyDirOverride(const std::string& dir) {
    if (const char* old = std::getenv("KERNELGATE_POLICY_DIR")) old_ = old, had_ = true;
    ::setenv("KERNELGATE_POLICY_DIR", dir.c_str(), 1);
  }
  ~PolicyDirOverride() {
    if (had_) ::setenv("KERNELGATE_POLICY_DIR", old_.c_str(), 1);
    else ::unsetenv("KERNELGATE_POLICY_DIR");
  }

 private:
  std::string old_;
  bool had_ = false;
};

}  // namespace kg::policy::test

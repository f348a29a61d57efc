// What the end-to-end tests share: the kernelgate binary (KG_BINARY, from each target) run through
// the shell, scratch directories and files, results.json, and whether the cuda kind can be built
// (KG_TEST_NVCC). The corpus tests (tests/policies) use it too.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace kg::e2e {

struct CommandResult {
  int status = -1;     // the exit status; -1 when it did not exit normally
  std::string output;  // stdout and stderr, byte for byte
  double seconds = 0;
};

// A shell command line's exit status and output: stdout, with stderr merged (or discarded when
// `stderr_too` is false). With limit_s > 0 the line's first command runs under `timeout` (so the
// line must start with a command, not a shell construct) with stdin from /dev/null.
inline CommandResult run_shell(const std::string& line, int limit_s = 0, bool stderr_too = true) {
  CommandResult r;
  const auto t0 = std::chrono::steady_clock::now();
  std::string cmd = line + (stderr_too ? " 2>&1" : " 2>/dev/null");
  if (limit_s > 0) cmd = "timeout -k 5 " + std::to_string(limit_s) + " " + cmd + " </dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// `kernelgate args` with stderr merged into stdout. With limit_s > 0 it runs under `timeout` and
// with stdin from /dev/null, so a blocking open or read shows as exit 124 instead of a hung test.
inline CommandResult run(const std::string& args, int limit_s = 0) { return run_shell(std::string(KG_BINARY) + " " + args, limit_s); }

// An empty kg-e2e-<name>-<pid>; callers prefix `name` per test file so that no two files share one.
inline std::filesystem::path temp_dir(const std::string& name) {
  std::filesystem::path d = std::filesystem::temp_directory_path() / ("kg-e2e-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

inline void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

inline std::string read(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

inline nlohmann::json load_results(const std::filesystem::path& out) {
  std::ifstream f(out / "results.json");
  EXPECT_TRUE(f.good()) << "no results.json in " << out;
  return nlohmann::json::parse(f);
}

inline const nlohmann::json* find_op(const nlohmann::json& results, const std::string& op) {
  for (const auto& o : results["ops"])
    if (o["op"] == op) return &o;
  return nullptr;
}

// Why this build's kernelgate cannot build the cuda kind ("" when it can): it was configured
// without a CUDA toolkit (KG_TEST_NVCC empty) or that toolkit's nvcc is gone.
inline std::string cuda_kind_missing() {
  const std::string nvcc = KG_TEST_NVCC;
  if (nvcc.empty()) return "kernelgate was built without a CUDA toolkit";
  std::error_code ec;
  if (!std::filesystem::exists(nvcc, ec)) return "no " + nvcc;
  return "";
}

}  // namespace kg::e2e

// What the end-to-end tests share: the kernelgate binary (KG_BINARY, from each target) run through
// the shell, scratch directories and files, results.json, and whether the cuda kind can be built
// (KG_TEST_NVCC). The corpus tests (tests/policies) use it too.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace kg::e2e {

struct CommandResult {
  int status = -1;     // the exit status; -1 when it did not exit normally
  std::string output;  // stdout and stderr, byte for byte
  double seconds = 0;
};

// Processes other than the caller holding `fd`'s pipe open, as "PID (COMM)" words.
inline std::string pipe_holders(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return "";
  const std::string link = "pipe:[" + std::to_string(st.st_ino) + "]";
  const std::string self = std::to_string(::getpid());
  std::string holders;
  // Explicit increments with an error code: a range-for's ++ throws when a process exits
  // mid-walk, and this runs only to explain a failure.
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator proc("/proc", ec), end; !ec && proc != end; proc.increment(ec)) {
    const std::string pid = proc->path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid == self) continue;
    std::error_code fd_ec;
    for (fs::directory_iterator f(proc->path() / "fd", fd_ec); !fd_ec && f != end; f.increment(fd_ec)) {
      std::error_code read_ec;
      if (fs::read_symlink(f->path(), read_ec).string() != link) continue;
      std::ifstream comm(proc->path() / "comm");
      std::string name;
      std::getline(comm, name);
      holders += (holders.empty() ? "" : ", ") + pid + " (" + name + ")";
      break;
    }
  }
  return holders;
}

// A shell command line's exit status and output: stdout, with stderr merged (or discarded when
// `stderr_too` is false). With limit_s > 0 the line's first command runs under `timeout` (so the
// line must start with a command, not a shell construct) with stdin from /dev/null, and once the
// shell has exited the output is read for 10 s more at most: a process the command left behind
// holding the output (a leak that would otherwise hang the test until ctest's limit) ends the read,
// status -2 and the holders named at the end of the output.
inline CommandResult run_shell(const std::string& line, int limit_s = 0, bool stderr_too = true) {
  CommandResult r;
  const auto t0 = std::chrono::steady_clock::now();
  std::string cmd = line + (stderr_too ? " 2>&1" : " 2>/dev/null");
  if (limit_s > 0) cmd = "timeout -k 5 " + std::to_string(limit_s) + " " + cmd + " </dev/null";
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return r;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return r;
  }
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  int st = 0;
  bool exited = false;
  std::chrono::steady_clock::time_point read_until{};
  std::array<char, 4096> buf;
  for (;;) {
    if (!exited && ::waitpid(pid, &st, WNOHANG) == pid) {
      exited = true;
      read_until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    }
    if (exited && limit_s > 0 && std::chrono::steady_clock::now() > read_until) {
      r.output += "\n[run_shell: the command exited, but its output is still held open by: " + pipe_holders(fds[0]) + "]\n";
      ::close(fds[0]);
      r.status = -2;
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return r;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, 100) < 0 && errno != EINTR) break;
    if (!(p.revents & (POLLIN | POLLHUP))) continue;
    const ssize_t n = ::read(fds[0], buf.data(), buf.size());
    if (n > 0) r.output.append(buf.data(), static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  ::close(fds[0]);
  if (!exited) ::waitpid(pid, &st, 0);
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

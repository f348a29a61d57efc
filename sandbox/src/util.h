// Small shared pieces of the sandbox: an owning fd, errno-carrying exceptions for the supervisor,
// and the fixed-size report the cloned child sends back (no allocation on that side).
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace kg::sandbox {

// Owns one file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Supervisor-side error: "<call>: <strerror(errno)>".
[[noreturn]] inline void throw_errno(const std::string& call, int err = errno) {
  throw std::runtime_error("kernelgate sandbox: " + call + ": " + std::strerror(err));
}

// ---- child -> supervisor report (written by the init child and the payload before exec) ----

enum class ReportKind : uint32_t {
  SetupFailed = 1,    // a syscall while building the box failed: err + what
  ExecFailed = 2,     // execve of the command failed: err + what
  PayloadStatus = 3,  // init reaped the payload: value = wait status
};

struct Report {
  uint32_t magic = 0x6b677362;  // "kgsb"
  ReportKind kind = ReportKind::SetupFailed;
  int32_t err = 0;
  int32_t value = 0;
  char what[240] = {};
};

// Exit codes of the init child when it could not build the box (the record is XX either way;
// the code tells a reader of raw wait statuses which side failed).
constexpr int kExitSetupFailed = 120;
constexpr int kExitExecFailed = 121;
constexpr int kExitPayloadSetupFailed = 122;

// Async-signal-safe helpers for the child: bounded string append, no allocation.
inline void child_append(char* buf, size_t cap, const char* s) {
  size_t n = 0;
  while (n < cap && buf[n]) ++n;
  while (n + 1 < cap && s && *s) buf[n++] = *s++;
  if (n < cap) buf[n] = 0;
}

}  // namespace kg::sandbox

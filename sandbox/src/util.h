// Small shared pieces of the sandbox: errno-carrying exceptions for the supervisor and the
// fixed-size report the cloned child sends back (no allocation on that side). The owning fd is
// kernelgate/unique_fd.h.
#pragma once

#include "kernelgate/unique_fd.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace kg::sandbox {

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

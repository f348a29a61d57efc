// fds: the payload's descriptor table (A5: only the fds the protocol needs).
#include "fds.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace kg::sandbox::fds {
namespace {

bool close_range_from(unsigned from, unsigned to) {
  if (from > to) return true;
  if (::syscall(SYS_close_range, from, to, 0) == 0) return true;
  // Kernels before 5.9: close one by one up to the fd limit.
  struct rlimit rl;
  unsigned max = 65536;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < max) max = static_cast<unsigned>(rl.rlim_cur);
  for (unsigned fd = from; fd <= to && fd < max; ++fd) ::close(static_cast<int>(fd));
  return true;
}

}  // namespace

void close_from(int from, const int* keep, int nkeep) {
  // keep[] sorted is not required: close the gaps between kept fds.
  int lo = from;
  while (true) {
    int next = -1;
    for (int i = 0; i < nkeep; ++i)
      if (keep[i] >= lo && (next < 0 || keep[i] < next)) next = keep[i];
    if (next < 0) {
      close_range_from(static_cast<unsigned>(lo), ~0U);
      return;
    }
    if (next > lo) close_range_from(static_cast<unsigned>(lo), static_cast<unsigned>(next - 1));
    lo = next + 1;
  }
}

bool arrange(int stdin_fd, int stdout_fd, int stderr_fd, const int* pass, int npass, Extra* extra, int nextra, Report* report) {
  auto fail = [&](const char* what) {
    report->kind = ReportKind::SetupFailed;
    report->err = errno;
    child_append(report->what, sizeof report->what, what);
    return false;
  };
  constexpr int kMax = 64;
  if (npass + nextra + 3 > kMax) {
    errno = EMFILE;
    return fail("too many fds to pass");
  }
  int total = 3 + npass + nextra;
  int src[kMax];
  src[0] = stdin_fd;
  src[1] = stdout_fd;
  src[2] = stderr_fd;
  for (int i = 0; i < npass; ++i) src[3 + i] = pass[i];
  for (int i = 0; i < nextra; ++i) src[3 + npass + i] = extra[i].fd;
  // Phase 1: copy every source above all targets so no dup2 below overwrites a pending source.
  int tmp[kMax];
  for (int i = 0; i < total; ++i) {
    tmp[i] = ::fcntl(src[i], F_DUPFD_CLOEXEC, total);
    if (tmp[i] < 0) return fail("fcntl(F_DUPFD) of a passed fd");
  }
  // Phase 2: into place. dup2 clears close-on-exec; the extras that want it get it back.
  for (int i = 0; i < total; ++i) {
    if (::dup2(tmp[i], i) < 0) return fail("dup2");
  }
  for (int i = 0; i < nextra; ++i) {
    int fd = 3 + npass + i;
    if (extra[i].cloexec && ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return fail("fcntl(F_SETFD)");
    extra[i].fd = fd;
  }
  // Phase 3: everything else goes (the supervisor's descriptors, the temporaries).
  close_range_from(static_cast<unsigned>(total), ~0U);
  return true;
}

bool send_fd(int sock, int fd) {
  char byte = 'F';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctrl;
  msg.msg_controllen = sizeof ctrl;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  __builtin_memcpy(CMSG_DATA(c), &fd, sizeof(int));
  ssize_t n;
  do n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n == 1;
}

int recv_fd(int sock) {
  char byte;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctrl;
  msg.msg_controllen = sizeof ctrl;
  ssize_t n;
  do n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int fd;
      __builtin_memcpy(&fd, CMSG_DATA(c), sizeof(int));
      return fd;
    }
  }
  return -1;
}

}  // namespace kg::sandbox::fds

// contain: init and payload, step by step (see contain.h for the order and why).
#include "contain.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fds.h"
#include "namespaces.h"
#include "seccomp.h"

namespace kg::sandbox::contain {
namespace {

void send_report(int fd, const Report& r) {
  const char* p = reinterpret_cast<const char*>(&r);
  size_t left = sizeof r;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

[[noreturn]] void fail(int fd, Report& r, int code) {
  send_report(fd, r);
  ::_exit(code);
}

[[noreturn]] void payload_main(const ChildPlan& plan) {
  Report r;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0) {
    r.err = errno;
    child_append(r.what, sizeof r.what, "open /dev/null");
    fail(plan.report_fd, r, kExitPayloadSetupFailed);
  }
  fds::Extra extra[2] = {{plan.report_fd, true}, {plan.notify_fd, true}};
  if (!fds::arrange(devnull, plan.stdout_fd, plan.stderr_fd, plan.pass_fds.data(), static_cast<int>(plan.pass_fds.size()), extra, 2, &r))
    fail(plan.report_fd, r, kExitPayloadSetupFailed);
  int report_fd = extra[0].fd, notify_fd = extra[1].fd;
  // The signal mask and dispositions are inherited through execve: start the command clean.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  if (!limits::apply(plan.rlimits, &r)) fail(report_fd, r, kExitPayloadSetupFailed);
  if (!limits::drop_privileges(&r)) fail(report_fd, r, kExitPayloadSetupFailed);
  int listener = seccomp::install_with_listener(*plan.bpf);
  if (listener < 0) {
    r.err = errno;
    child_append(r.what, sizeof r.what, "seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER)");
    fail(report_fd, r, kExitPayloadSetupFailed);
  }
  // From here on the filter is in force: only sendmsg, close, write, execve, exit_group follow.
  if (!fds::send_fd(notify_fd, listener)) {
    r.err = errno;
    child_append(r.what, sizeof r.what, "sendmsg(seccomp listener)");
    fail(report_fd, r, kExitPayloadSetupFailed);
  }
  ::close(listener);
  ::close(notify_fd);
  ::execve(plan.argv[0], plan.argv.data(), plan.envp.data());
  r.kind = ReportKind::ExecFailed;
  r.err = errno;
  child_append(r.what, sizeof r.what, "execve ");
  child_append(r.what, sizeof r.what, plan.argv[0]);
  fail(report_fd, r, kExitExecFailed);
}

int payload_entry(void* plan) { payload_main(*static_cast<const ChildPlan*>(plan)); }

}  // namespace

void init_main(const ChildPlan& plan) {
  Report r;
  // The supervisor's death takes the box with it (pid 1 dying kills the namespace).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  auto set_up = [&] {
    if (!namespaces::setup_uts(&r)) fail(plan.report_fd, r, kExitSetupFailed);
    if (!mounts::run(plan.mounts, &r)) fail(plan.report_fd, r, kExitSetupFailed);
  };
  if (plan.mounts_before_go) set_up();
  // The go, unless the supervisor is gone: a pidfd is readable once its process has exited.
  pollfd wait_for[2] = {{plan.sync_fd, POLLIN, 0}, {plan.supervisor_pidfd, POLLIN, 0}};
  while (::poll(wait_for, 2, -1) < 0)
    if (errno != EINTR) ::_exit(kExitSetupFailed);
  if (wait_for[1].revents) ::_exit(kExitSetupFailed);  // the supervisor has exited
  char go = 0;
  ssize_t n;
  do n = ::read(plan.sync_fd, &go, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1) ::_exit(kExitSetupFailed);  // supervisor gone or gave up
  ::close(plan.sync_fd);
  if (plan.supervisor_pidfd >= 0) ::close(plan.supervisor_pidfd);
  if (!plan.mounts_before_go) set_up();

  // The payload shares init's memory until its execve (vfork-style, on a stack of its own): init
  // is a copy of the supervisor, often a process with libtorch loaded, and copying its page
  // tables once more, then tearing them down again at execve, was most of a box's start-up.
  // Init waits meanwhile; the payload allocates nothing and changes only its own task state.
  constexpr size_t kPayloadStack = 256 << 10;
  void* stack = ::mmap(nullptr, kPayloadStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    r.err = errno;
    child_append(r.what, sizeof r.what, "mmap payload stack");
    fail(plan.report_fd, r, kExitSetupFailed);
  }
  int pid =
      ::clone(payload_entry, static_cast<char*>(stack) + kPayloadStack, CLONE_VM | CLONE_VFORK | SIGCHLD, const_cast<ChildPlan*>(&plan));
  if (pid < 0) {
    r.err = errno;
    child_append(r.what, sizeof r.what, "start payload");
    fail(plan.report_fd, r, kExitSetupFailed);
  }
  ::munmap(stack, kPayloadStack);

  // init keeps nothing but the report pipe, and its memory is not readable from inside.
  int keep[1] = {plan.report_fd};
  fds::close_from(0, keep, 1);
  ::prctl(PR_SET_DUMPABLE, 0);
  while (true) {
    int status = 0;
    pid_t w = ::wait4(-1, &status, __WALL, nullptr);
    if (w < 0) {
      if (errno == EINTR) continue;
      ::_exit(0);
    }
    if (w == pid) {
      Report done;
      done.kind = ReportKind::PayloadStatus;
      done.value = status;
      send_report(plan.report_fd, done);
      ::_exit(0);  // the kernel kills every process left in the namespace
    }
  }
}

}  // namespace kg::sandbox::contain

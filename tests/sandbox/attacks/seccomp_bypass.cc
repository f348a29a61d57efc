// A11 getting around the filter. Modes:
//   int80        an i386 syscall through int 0x80 (getpid, then socketcall) -> foreign ABI: SIGSYS
//   x32          getpid with the x32 bit (0x40000000) set                   -> foreign ABI: SIGSYS
//   io_uring     io_uring_setup                                             -> SV io_uring_setup
//   clone3       clone3 must answer ENOSYS (the filter cannot read its flags); exits 0 when it does
//   clone3_ns    clone3 asking for CLONE_NEWUSER: still ENOSYS, never a namespace
//   ioctl_high   ioctl(0, TIOCSTI | 1<<32): the high bits must not smuggle TIOCSTI past a rule -> SV ioctl
//   ioctl_ok     ioctl(1, TCGETS | 0xdead<<32): the same allowed request with junk high bits is
//                still only TCGETS (allowed; exits 0)
//   seccomp      install another filter (compile profile has no seccomp)   -> SV seccomp
//   personality  personality(READ_IMPLIES_EXEC)                             -> SV personality
//   userfaultfd  userfaultfd (kernel-exploit staple)                        -> SV userfaultfd
//   bpf          bpf(BPF_PROG_LOAD)                                         -> SV bpf
//   perf         perf_event_open                                            -> SV perf_event_open
//   keyctl       add_key                                                    -> SV add_key
#include <csignal>
#include <linux/sched.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "attack.h"

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  std::string m = argc > 1 ? argv[1] : "int80";
  long rc = 0;
  if (m == "int80") {
    long r;
    asm volatile("int $0x80" : "=a"(r) : "a"(20L /* i386 getpid */) : "memory");
    result("int80 getpid", std::to_string(r));
    asm volatile("int $0x80" : "=a"(r) : "a"(102L /* socketcall */), "b"(1L), "c"(0L) : "memory");
    result("int80 socketcall", std::to_string(r));
    return kBreached;
  }
  if (m == "x32") {
    long r;
    asm volatile("syscall" : "=a"(r) : "a"(0x40000000L | 39L /* x32 getpid */) : "rcx", "r11", "memory");
    result("x32 getpid", std::to_string(r));
    return kBreached;
  }
  if (m == "clone3" || m == "clone3_ns") {
    clone_args a{};
    a.flags = m == "clone3_ns" ? CLONE_NEWUSER : 0;
    a.exit_signal = SIGCHLD;
    rc = ::syscall(SYS_clone3, &a, sizeof a);
    if (rc == 0) _exit(0);
    bool enosys = rc < 0 && errno == ENOSYS;
    result("clone3", enosys ? "ENOSYS" : "NOT ENOSYS");
    return enosys ? 0 : kBreached;
  }
  if (m == "io_uring") rc = ::syscall(SYS_io_uring_setup, 8, nullptr);
  else if (m == "ioctl_high") {
    char c = 'x';
    rc = ::syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSTI, &c);
  } else if (m == "ioctl_ok") {
    termios t;
    rc = ::syscall(SYS_ioctl, 1, (0xdeadUL << 32) | TCGETS, &t);
    result("ioctl TCGETS|high", rc == 0 ? "answered" : strerrorname_np(errno));
    return 0;
  } else if (m == "seccomp") rc = ::syscall(SYS_seccomp, 1 /* SET_MODE_FILTER */, 0, nullptr);
  else if (m == "personality") rc = ::personality(READ_IMPLIES_EXEC);
  else if (m == "userfaultfd") rc = ::syscall(SYS_userfaultfd, 0);
  else if (m == "bpf") rc = ::syscall(SYS_bpf, 5 /* BPF_PROG_LOAD */, nullptr, 0);
  else if (m == "perf") rc = ::syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0);
  else if (m == "keyctl") rc = ::syscall(SYS_add_key, "user", "kg", "x", 1, -2);
  else return 2;
  return refused(m, rc) ? 0 : kBreached;
}

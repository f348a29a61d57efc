// seccomp: the profiles' syscall filters.
//
// Every filter is default-deny. The first stage (installed by the sandbox before exec) denies by
// SECCOMP_RET_USER_NOTIF so the supervisor learns which syscall was attempted; the untrusted side
// cannot answer its own notification (the listener fd exists only in the supervisor) and the
// blocked thread never runs again: the supervisor kills the whole pid namespace. The second stage
// of the run profiles (tighten_runner_filter, installed by kg-runner itself) denies by
// SECCOMP_RET_KILL_PROCESS, since only one listener may exist per filter tree.
//
// Rules on arguments: ioctl request numbers are compared under a 32-bit mask (the kernel
// truncates `cmd` to unsigned int, so high bits must not let a request slip past a comparison);
// clone flags are checked under a mask so namespace flags never pass; clone3 answers ENOSYS
// because its flags live in memory BPF cannot read, which makes libc fall back to clone.
#include "seccomp.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <mutex>
#include <seccomp.h>
#include <stdexcept>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "seccomp_ctx.h"
#include "util.h"

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#endif

namespace kg::sandbox::seccomp {
namespace {

// Flags that would create or enter a namespace: never allowed to clone().
constexpr uint64_t kNsFlags = CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;

// ---- rule sets --------------------------------------------------------------------------------

// What every dynamically linked program needs to run at all: memory, files it may already reach
// through the mount view (the mount view and read-only binds are what limits them), time, signals
// within its own pid namespace, and exit.
const char* const kBase[] = {
    // file I/O on paths inside the box and fds it holds
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "open",
    "openat",
    "openat2",
    "creat",
    "close",
    "close_range",
    "lseek",
    "fcntl",
    "dup",
    "dup2",
    "dup3",
    "stat",
    "fstat",
    "lstat",
    "newfstatat",
    "statx",
    "statfs",
    "fstatfs",
    "access",
    "faccessat",
    "faccessat2",
    "readlink",
    "readlinkat",
    "getdents",
    "getdents64",
    "getcwd",
    "chdir",
    "fchdir",
    "fsync",
    "fdatasync",
    "ftruncate",
    "truncate",
    "fadvise64",
    "fallocate",
    "flock",
    "pipe",
    "pipe2",
    "umask",
    "sendfile",
    "copy_file_range",
    "splice",
    "tee",
    "getxattr",
    "lgetxattr",
    "fgetxattr",
    "listxattr",
    "llistxattr",
    "flistxattr",
    "utimensat",
    "utime",
    "utimes",
    "futimesat",
    // creating and removing files: only the scratch tmpfs and --rw binds are writable
    "mkdir",
    "mkdirat",
    "rmdir",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "chmod",
    "fchmod",
    "fchmodat",
    // memory
    "brk",
    "mmap",
    "munmap",
    "mremap",
    "mprotect",
    "madvise",
    "mincore",
    "msync",
    "membarrier",
    // waiting and polling
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "eventfd",
    "eventfd2",
    "futex",
    "futex_waitv",
    "nanosleep",
    "clock_nanosleep",
    "sched_yield",
    "pause",
    "restart_syscall",
    // time
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "times",
    "alarm",
    "setitimer",
    "getitimer",
    "timer_create",
    "timer_settime",
    "timer_gettime",
    "timer_getoverrun",
    "timer_delete",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    // signals: kill/tgkill reach only processes of the box's own pid namespace
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigsuspend",
    "rt_sigpending",
    "rt_sigtimedwait",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "sigaltstack",
    "signalfd",
    "signalfd4",
    "kill",
    "tgkill",
    "tkill",
    // identity and process info (read-only)
    "getpid",
    "getppid",
    "gettid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getgroups",
    "getresuid",
    "getresgid",
    "getpgrp",
    "getpgid",
    "getsid",
    "setpgid",
    "uname",
    "sysinfo",
    "getrusage",
    "getrlimit",
    "getpriority",
    "getcpu",
    "sched_getaffinity",
    "sched_getparam",
    "sched_getscheduler",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "get_mempolicy",
    // prlimit64 may only lower limits without CAP_SYS_RESOURCE (dropped), so it cannot escape them
    "prlimit64",
    "setrlimit",
    // thread and libc start-up
    "arch_prctl",
    "set_tid_address",
    "set_robust_list",
    "rseq",
    "getrandom",
    // exit
    "exit",
    "exit_group",
    "wait4",
    "waitid",
};

// Tty and fd ioctls libc and toolchains issue (isatty, non-blocking, close-on-exec). Nothing that
// injects input (TIOCSTI) or reaches a device.
const unsigned long kIoctls[] = {TCGETS, TIOCGWINSZ, TIOCGPGRP, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX};

void add_ioctls(Ctx& c) {
  for (unsigned long cmd : kIoctls) c.allow_if("ioctl", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, cmd));
}

void add_prctls(Ctx& c) {
  // naming threads (libgomp, libtorch, cc1plus), querying dumpability, marking the process
  // non-dumpable, anonymous mapping names (glibc >= 2.38), and what libseccomp probes in
  // tighten_runner_filter (PR_GET_SECCOMP, PR_SET_NO_NEW_PRIVS: both can only restrict).
  for (int op : {PR_SET_NAME, PR_GET_NAME, PR_GET_DUMPABLE, PR_GET_SECCOMP, PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS, PR_SET_VMA,
                 PR_GET_TIMERSLACK, PR_CAPBSET_READ, PR_GET_KEEPCAPS, PR_GET_PDEATHSIG})
    c.allow_if("prctl", SCMP_A0(SCMP_CMP_EQ, static_cast<uint64_t>(op)));
  // Becoming non-dumpable hides memory from /proc/pid/mem; becoming dumpable again is not needed.
  c.allow_if("prctl", SCMP_A0(SCMP_CMP_EQ, PR_SET_DUMPABLE));
}

// Opens that the run profiles' listener checks (file_opens.h) instead of allowing outright.
bool checked_open_name(const char* name) { return std::strcmp(name, "open") == 0 || std::strcmp(name, "openat") == 0; }

std::vector<sock_filter> build(Profile profile) {
  Ctx c(SCMP_ACT_NOTIFY);
  // In the run profiles open and openat fall to the default action: the supervisor sees each one
  // and lets it through or refuses it (Process::watch_opens).
  for (const char* name : kBase)
    if (profile == Profile::Compile || !checked_open_name(name)) c.allow(name);
  add_ioctls(c);
  add_prctls(c);
  // clone3 keeps its flags in memory that BPF cannot inspect: ENOSYS makes glibc fall back to clone.
  c.add(SCMP_ACT_ERRNO(ENOSYS), "clone3");
  // execve: toolchain drivers exec their passes; the run profiles exec the runner itself
  // (tighten_runner_filter removes it before untrusted code runs).
  c.allow("execve");
  c.allow("execveat");
  // sendmsg/recvmsg on the fds the protocol passes; the net namespace has no routes anyway.
  for (const char* n :
       {"sendmsg", "recvmsg", "sendto", "recvfrom", "shutdown", "getsockopt", "getsockname", "getpeername", "sendmmsg", "recvmmsg"})
    c.allow(n);

  if (profile == Profile::Compile) {
    // Toolchains fork and exec their passes (gcc -> cc1plus, as, collect2 -> ld; nvcc -> cicc, ptxas,
    // fatbinary, nvlink, the host compiler). Plain fork/vfork clones only: no namespace flags.
    c.allow("fork");
    c.allow("vfork");
    c.allow_if("clone", SCMP_A0(SCMP_CMP_MASKED_EQ, kNsFlags, 0));
    // Only local sockets (some build tools use socketpair for job control); no AF_INET, netlink, vsock.
    c.allow_if("socket", SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
    c.allow_if("socketpair", SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
    c.allow("connect");  // an AF_UNIX socket can only reach this box's own abstract namespace and files
    c.allow("setsid");   // make-style job control inside the box
  } else {
    // Runner start-up: threads only (libtorch's and OpenMP's pools), never a new process.
    c.allow_if("clone", SCMP_A0(SCMP_CMP_MASKED_EQ, kNsFlags | CLONE_THREAD, CLONE_THREAD));
    // Thread pools pin themselves to CPUs; libnuma (pulled in by libtorch) probes and resets the
    // memory policy of its own process at start-up.
    c.allow("sched_setaffinity");
    c.allow("set_mempolicy");
    c.allow("mbind");
    // libgcrypt (a dependency of Debian's libtorch) locks a small secure-memory pool; RLIMIT_MEMLOCK
    // bounds it.
    c.allow("mlock");
    c.allow("munlock");
    // glibc's user/group lookups try nscd's unix socket during start-up (getpwuid). Only AF_UNIX:
    // the box has its own network namespace (its own abstract socket names) and its mount view
    // holds no host daemon's socket. The second stage removes both.
    c.allow_if("socket", SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
    c.allow("connect");
    // Anonymous shared memory for the supervisor protocol and, in CUDA, the driver's IPC.
    c.allow("memfd_create");
    // kg-runner installs the tighter second stage itself (seccomp may only add restrictions;
    // libseccomp probes with SECCOMP_SET_MODE_STRICT and invalid flags, which is EINVAL, and
    // strict mode itself would only restrict further).
    c.allow_if("seccomp", SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_STRICT));
    c.allow_if("seccomp", SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER));
    c.allow_if("seccomp", SCMP_A0(SCMP_CMP_EQ, SECCOMP_GET_ACTION_AVAIL));
    c.allow_if("seccomp", SCMP_A0(SCMP_CMP_EQ, SECCOMP_GET_NOTIF_SIZES));
    if (profile == Profile::RunCuda) {
      // The NVIDIA driver talks to /dev/nvidia* through a large, versioned set of ioctls; only the
      // device nodes of the profile are reachable, and tty ioctls that inject input are not.
      c.allow_if("ioctl", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xff00, 'F' << 8));              // NV_IOCTL_MAGIC 'F'
      c.allow_if("ioctl", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffff0000ULL, 0x30000000ULL));  // nvidia-uvm UVM_INITIALIZE
      // nvidia-uvm's other requests are plain small numbers (UVM_REGISTER_GPU = 37, ...). No tty or
      // random-device request is below 0x100, and those are the only other nodes in /dev.
      c.allow_if("ioctl", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffff00ULL, 0));
      c.allow("sched_setscheduler");
      c.allow("setpriority");
      // The CUDA driver (580) sets up a listening AF_UNIX socket of its own at context creation
      // (socket creation is AF_UNIX-only, and the box's network namespace is empty).
      c.allow("bind");
      c.allow("listen");
      c.allow("setsockopt");
    }
  }
  return c.export_bpf();
}

}  // namespace

const std::vector<sock_filter>& profile_bpf(Profile profile) {
  static std::mutex mu;
  static std::vector<sock_filter> cache[3];
  static bool built[3] = {false, false, false};
  int i = static_cast<int>(profile);
  std::lock_guard<std::mutex> lock(mu);
  if (!built[i]) {
    cache[i] = build(profile);
    built[i] = true;
  }
  return cache[i];
}

int install_with_listener(const std::vector<sock_filter>& bpf) {
  sock_fprog prog;
  prog.len = static_cast<unsigned short>(bpf.size());
  prog.filter = const_cast<sock_filter*>(bpf.data());
  return static_cast<int>(::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
}

bool receive(int listener, Notification* n) {
  seccomp_notif req;
  std::memset(&req, 0, sizeof req);
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return false;
  n->id = req.id;
  n->tid = static_cast<pid_t>(req.pid);
  n->arch = req.data.arch;
  n->nr = req.data.nr;
  std::memcpy(n->args, req.data.args, sizeof n->args);
  char* resolved = seccomp_syscall_resolve_num_arch(req.data.arch, req.data.nr);
  n->name = resolved ? resolved : "nr " + std::to_string(req.data.nr);
  ::free(resolved);
  return true;
}

bool still_pending(int listener, uint64_t id) { return ::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0; }

namespace {
void respond(int listener, uint64_t id, int err, uint32_t flags) {
  seccomp_notif_resp resp;
  std::memset(&resp, 0, sizeof resp);
  resp.id = id;
  resp.error = err ? -err : 0;
  resp.flags = flags;
  ::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}
}  // namespace

void let_through(int listener, uint64_t id) { respond(listener, id, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE); }
void refuse(int listener, uint64_t id, int err) { respond(listener, id, err, 0); }

bool is_checked_open(const Notification& n) { return n.arch == SCMP_ARCH_X86_64 && (n.nr == SYS_open || n.nr == SYS_openat); }

bool receive(int listener, std::string* name, bool let_through) {
  seccomp_notif req;
  std::memset(&req, 0, sizeof req);
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return false;
  char* resolved = seccomp_syscall_resolve_num_arch(req.data.arch, req.data.nr);
  if (resolved) {
    *name = resolved;
    ::free(resolved);
  } else {
    *name = "nr " + std::to_string(req.data.nr);
  }
  if (let_through) {
    // Audit mode: the first two arguments help to write the rule (ioctl requests, socket families).
    char args[64];
    std::snprintf(args, sizeof args, "(%#llx,%#llx)", static_cast<unsigned long long>(req.data.args[0]),
                  static_cast<unsigned long long>(req.data.args[1]));
    *name += args;
    seccomp_notif_resp resp;
    std::memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }
  return true;
}

std::string killed_syscall_from_kernel_log(pid_t host_pid, long long since_us) {
  UniqueFd kmsg(::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!kmsg) return "";
  const std::string pid_key = " pid=" + std::to_string(host_pid) + " ";
  std::string found;
  char rec[8192];
  while (true) {
    ssize_t n = ::read(kmsg.get(), rec, sizeof rec - 1);
    if (n < 0 && errno == EPIPE) continue;  // overwritten records: go on with the next
    if (n <= 0) break;
    rec[n] = 0;
    // "<prio>,<seq>,<usec>,<flags>;audit: type=1326 ... pid=N ... arch=c000003e syscall=59 ..."
    std::string line(rec, static_cast<size_t>(n));
    if (line.find("type=1326") == std::string::npos || line.find(pid_key) == std::string::npos) continue;
    long long usec = 0;
    size_t c1 = line.find(','), c2 = line.find(',', c1 + 1);
    if (c1 != std::string::npos && c2 != std::string::npos) usec = std::atoll(line.c_str() + c2 + 1);
    if (usec < since_us) continue;
    size_t a = line.find(" arch="), sc = line.find(" syscall=");
    if (a == std::string::npos || sc == std::string::npos) continue;
    uint32_t arch = static_cast<uint32_t>(std::strtoul(line.c_str() + a + 6, nullptr, 16));
    int nr = std::atoi(line.c_str() + sc + 9);
    char* name = seccomp_syscall_resolve_num_arch(arch, nr);
    found = name ? name : "nr " + std::to_string(nr);
    ::free(name);
    if (arch != SCMP_ARCH_X86_64) found += " (i386 ABI)";
    else if (nr & 0x40000000) found = "x32 syscall " + std::to_string(nr & ~0x40000000);
  }
  return found;
}

}  // namespace kg::sandbox::seccomp

// A6 signal or inspect the supervisor and siblings. Modes:
//   kill PID         kill(PID, SIGKILL) for the supervisor's host pid (and SIGTERM, SIGSTOP)
//   killall          kill(-1, SIGKILL): only our own pid namespace can be hit
//   init             kill(1, SIGKILL) and SIGTERM: the box's init ignores them
//   ptrace           PTRACE_ATTACH to init (pid 1)              -> outside the profile (SV ptrace)
//   vm_readv         process_vm_readv from init                 -> SV process_vm_readv
//   pidfd_getfd      pidfd_open(1) then pidfd_getfd             -> SV pidfd_open
//   pidfd_getfd_raw  pidfd_getfd on a guessed pidfd number      -> SV pidfd_getfd
// Exit 0 when refused; what the sandbox kills never gets to exit.
#include <csignal>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "attack.h"

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  std::string mode = argc > 1 ? argv[1] : "kill";
  if (mode == "kill") {
    pid_t pid = argc > 2 ? std::atoi(argv[2]) : 1;
    bool b = false;
    // Our pid namespace has only pids 1 and 2 (and our children): a host pid is ESRCH unless it
    // happens to be one of those.
    if (pid > 2) {
      b |= !refused("kill " + std::to_string(pid) + " SIGSTOP", ::kill(pid, SIGSTOP));
      b |= !refused("kill " + std::to_string(pid) + " SIGKILL", ::kill(pid, SIGKILL));
    }
    return b ? kBreached : 0;
  }
  if (mode == "killall") {
    long rc = ::kill(-1, SIGKILL);  // every process we may signal, except ourselves
    result("kill -1", rc == 0 ? "sent (own namespace only)" : strerrorname_np(errno));
    return 0;
  }
  if (mode == "init") {
    ::kill(1, SIGKILL);
    ::kill(1, SIGTERM);
    ::kill(1, SIGSEGV);
    ::usleep(100000);
    result("init", "still there (we are still running)");
    return 0;
  }
  if (mode == "ptrace") return refused("ptrace attach 1", ::ptrace(PTRACE_ATTACH, 1, nullptr, nullptr)) ? 0 : kBreached;
  if (mode == "vm_readv") {
    char buf[16];
    iovec local{buf, sizeof buf}, remote{reinterpret_cast<void*>(0x400000), sizeof buf};
    return refused("process_vm_readv 1", ::process_vm_readv(1, &local, 1, &remote, 1, 0)) ? 0 : kBreached;
  }
  if (mode == "pidfd_getfd") {
    long pfd = ::syscall(SYS_pidfd_open, 1, 0);
    if (refused("pidfd_open 1", pfd)) return 0;
    return refused("pidfd_getfd", ::syscall(SYS_pidfd_getfd, pfd, 3, 0)) ? 0 : kBreached;
  }
  if (mode == "pidfd_getfd_raw") return refused("pidfd_getfd", ::syscall(SYS_pidfd_getfd, 3, 3, 0)) ? 0 : kBreached;
  return 2;
}

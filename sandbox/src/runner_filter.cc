// kg-runner's second seccomp stage, installed by the runner itself inside the box right before the
// first untrusted call. Linked into kg-runner on its own (kg_sandbox_runner_filter): the runner
// carries none of the supervisor's sandbox.
#include "kernelgate/runner_filter.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "seccomp_ctx.h"

namespace kg::sandbox {

std::string tighten_runner_filter(Profile profile) {
  if (profile == Profile::Compile) return "tighten_runner_filter: not a run profile";
  try {
    // Allow by default: the first stage (still in force underneath) already denies everything
    // outside the run profile; this stage removes what untrusted code must not do any more.
    seccomp::Ctx c(SCMP_ACT_ALLOW);
    auto kill = [&](const char* n) { c.add(SCMP_ACT_KILL_PROCESS, n); };
    // no exec: the untrusted call must not replace the runner with another program
    kill("execve");
    kill("execveat");
    // no new files: nothing may be created, truncated or opened for writing. Opening for reading
    // stays (dlopen of the artifact and of its dependencies happens after this filter, and the
    // mount view holds nothing secret); openat2 keeps its flags in memory BPF cannot read.
    for (const char* n : {"open", "openat"}) {
      int flags_arg = std::strcmp(n, "open") == 0 ? 1 : 2;
      for (uint64_t bit : {uint64_t(O_WRONLY), uint64_t(O_RDWR), uint64_t(O_CREAT), uint64_t(O_TRUNC)})
        c.add(SCMP_ACT_KILL_PROCESS, n, scmp_arg_cmp{static_cast<unsigned>(flags_arg), SCMP_CMP_MASKED_EQ, bit, bit});
    }
    kill("openat2");
    kill("creat");
    // no sockets and no new channels: the protocol's fds are already there
    for (const char* n : {"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4"}) kill(n);
    // no process creation but threads
    kill("fork");
    kill("vfork");
    c.add(SCMP_ACT_KILL_PROCESS, "clone", SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    // no more filters, no memfds (nothing to exec or share any more) except for the CUDA driver
    kill("seccomp");
    if (profile == Profile::RunCpu) kill("memfd_create");
    // Memory of the runner (reference data it may hold) must not become readable through /proc.
    if (::prctl(PR_SET_DUMPABLE, 0) != 0) return std::string("prctl(PR_SET_DUMPABLE): ") + std::strerror(errno);
    // TSYNC: every thread of the runner, including libtorch's pools, gets the filter.
    seccomp::Ctx::check(seccomp_attr_set(c.get(), SCMP_FLTATR_CTL_TSYNC, 1), "attr tsync");
    std::vector<sock_filter> bpf = c.export_bpf();
    sock_fprog prog;
    prog.len = static_cast<unsigned short>(bpf.size());
    prog.filter = bpf.data();
    long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
    if (rc != 0) {
      if (rc > 0) return "seccomp(TSYNC): thread " + std::to_string(rc) + " could not be synchronised";
      return std::string("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): ") + std::strerror(errno);
    }
    return "";
  } catch (const std::exception& e) { return e.what(); }
}

}  // namespace kg::sandbox

// contain: the steps the cloned child runs, in order. Everything is prepared by the supervisor
// in a ChildPlan before clone(); the child only executes it (no allocation, no exceptions).
//
//   init (pid 1 of the new pid namespace)          payload (pid 2)
//   ---------------------------------------        -----------------------------------------
//   parent-death signal                             parent-death signal
//   wait for the supervisor's "go"                  fds: stdin=/dev/null, stdout/stderr pipes,
//     (uid/gid maps written, cgroup joined)              pass_fds at 3.., everything else closed
//   hostname (UTS namespace)                        rlimits
//   mounts: tmpfs root, binds, scratch, /dev,       capabilities dropped, no_new_privs
//     /proc, pivot_root, root read-only, chdir      seccomp filter with a listener; the listener
//     (without a user namespace: hostname and
//     mounts first, then the "go")
//   start the payload (vfork-style: it shares        fd sent to the supervisor, then closed
//     init's memory until its execve)
//   close every fd but the report pipe;             execve(argv, env)
//   reap everything; report the payload's status
//   and exit (which kills whatever is left)
#pragma once

#include <linux/filter.h>
#include <string>
#include <vector>

#include "limits.h"
#include "mounts.h"

namespace kg::sandbox::contain {

struct ChildPlan {
  std::vector<mounts::MountOp> mounts;
  std::vector<limits::Rlimit> rlimits;
  const std::vector<sock_filter>* bpf = nullptr;
  std::vector<std::string> argv_store, env_store;
  std::vector<char*> argv, envp;  // null-terminated views of the stores
  std::vector<int> pass_fds;
  int sync_fd = -1;  // init reads one byte: the supervisor has finished its part
  // A pidfd of the supervisor's process: readable once it has exited. PR_SET_PDEATHSIG set in the
  // child after the supervisor died (between clone and prctl) never fires, and init, a copy of
  // the supervisor holding its descriptors until the payload starts, would wait for the "go" for
  // ever (its own copy of the sync socket's other end keeps it open).
  int supervisor_pidfd = -1;
  // No user namespace, so the mounts need no id maps: init builds the root while the supervisor
  // joins it to the cgroup (the payload is forked only after the "go").
  bool mounts_before_go = false;
  int report_fd = -1;  // Reports to the supervisor
  int notify_fd = -1;  // the payload sends the seccomp listener here
  int stdout_fd = -1, stderr_fd = -1;
};

// Entry point of the cloned child. Never returns.
[[noreturn]] void init_main(const ChildPlan& plan);

}  // namespace kg::sandbox::contain

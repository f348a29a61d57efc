// seccomp: the syscall filters of the three profiles (built with libseccomp in the supervisor,
// exported as BPF and installed by the child with a raw syscall), and the supervisor's side of
// the user-notification listener that names the violating syscall.
#pragma once

#include <linux/filter.h>
#include <string>
#include <sys/types.h>
#include <vector>

#include "kernelgate/sandbox.h"

namespace kg::sandbox::seccomp {

// The first-stage filter of a profile, as BPF. Built once per profile and cached (thread-safe).
// Its default action is SECCOMP_RET_USER_NOTIF: the denied syscall blocks, the supervisor reads
// its number from the listener, records the name and kills the tree. Foreign ABIs (i386, x32)
// are SECCOMP_RET_KILL_PROCESS. Throws std::runtime_error when libseccomp fails.
const std::vector<sock_filter>& profile_bpf(Profile profile);

// Child side: no_new_privs must already be set. Installs `bpf` with a new listener; returns the
// listener fd, or -1 with errno set.
int install_with_listener(const std::vector<sock_filter>& bpf);

// Supervisor side: one notification as the listener hands it over.
struct Notification {
  uint64_t id = 0;
  pid_t tid = 0;      // the calling thread, in the supervisor's pid namespace
  uint32_t arch = 0;  // AUDIT_ARCH_*
  int nr = -1;        // the syscall's number
  uint64_t args[6] = {};
  std::string name;  // its name, or "nr N" if unknown
};
// Reads one pending notification; false when none was.
bool receive(int listener, Notification* n);
// Whether the thread behind `id` is still blocked in that syscall (anything read from its memory
// belongs to it only if so).
bool still_pending(int listener, uint64_t id);
// Answers a notification: the syscall goes ahead as the caller made it, or fails with `err`.
void let_through(int listener, uint64_t id);
void refuse(int listener, uint64_t id, int err);
// Whether a run profile's filter hands this syscall to the listener to be checked (open, openat)
// rather than as a violation.
bool is_checked_open(const Notification& n);

// Supervisor side: reads one notification from the listener. Returns false if none was pending.
// On success `name` holds the syscall name (or "nr N" if unknown); when `let_through`, the call
// is allowed to continue (audit mode), otherwise it is left blocked (the caller kills the tree).
bool receive(int listener, std::string* name, bool let_through);

// Supervisor side, best effort: the name of the syscall for which the kernel killed process
// `host_pid` with SECCOMP_RET_KILL_PROCESS (foreign ABI, or the runner's second stage). The kernel
// logs such kills (audit type 1326) to /dev/kmsg; only records stamped after `since_us`
// (CLOCK_MONOTONIC, microseconds) count. "" when the log is unreadable (no CAP_SYSLOG) or has none.
std::string killed_syscall_from_kernel_log(pid_t host_pid, long long since_us);

}  // namespace kg::sandbox::seccomp

// limits: rlimits and the privilege drop.
#include "limits.h"

#include <cmath>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kg::sandbox::limits {

std::vector<Rlimit> plan(const Spec& spec, bool memory_by_cgroup, bool pids_by_cgroup, bool cpu_by_cgroup) {
  const Limits& L = spec.limits;
  std::vector<Rlimit> out;
  auto add = [&](int res, rlim_t soft, rlim_t hard, const char* name) { out.push_back({res, {soft, hard}, name}); };
  // CPU seconds per process: SIGXCPU at the soft limit, SIGKILL one second later. When the
  // supervisor accounts the whole tree (cgroup CPU usage, sampled every 100 ms) it is the one that
  // ends the box at the limit, and this is a backstop a second later (a compiler killed by
  // SIGXCPU would otherwise look like a crash of the compiler, not a time-out).
  rlim_t cpu = static_cast<rlim_t>(std::ceil(L.cpu_s > 0 ? L.cpu_s : 1)) + (cpu_by_cgroup ? 1 : 0);
  add(RLIMIT_CPU, cpu, cpu + 1, "RLIMIT_CPU");
  // Core dumps would carry the process's memory out of the box (A14).
  add(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
  add(RLIMIT_NOFILE, static_cast<rlim_t>(L.max_open_files), static_cast<rlim_t>(L.max_open_files), "RLIMIT_NOFILE");
  rlim_t fsize = static_cast<rlim_t>(L.max_file_mb) << 20;
  add(RLIMIT_FSIZE, fsize, fsize, "RLIMIT_FSIZE");
  // Locked memory: a small pool (libgcrypt's secure memory in libtorch's start-up); the CUDA
  // driver pins host buffers and keeps the inherited limit.
  if (spec.profile != Profile::RunCuda) add(RLIMIT_MEMLOCK, 64 << 10, 64 << 10, "RLIMIT_MEMLOCK");
  if (!memory_by_cgroup && spec.profile != Profile::RunCuda && L.memory_mb > 0) {
    // Fallback without a memory cgroup: address space. Not for CUDA, which reserves huge ranges.
    rlim_t as = static_cast<rlim_t>(L.memory_mb) << 20;
    add(RLIMIT_AS, as, as, "RLIMIT_AS");
  }
  if (!pids_by_cgroup) {
    // Fallback without a pids cgroup. Counted per real uid; inside a user namespace that uid is
    // the box's own, as root it is shared with the host's root processes (documented weakness).
    add(RLIMIT_NPROC, static_cast<rlim_t>(L.max_processes), static_cast<rlim_t>(L.max_processes), "RLIMIT_NPROC");
  }
  return out;
}

bool apply(const std::vector<Rlimit>& rl, Report* report) {
  for (const Rlimit& r : rl) {
    if (::setrlimit(r.resource, &r.value) != 0) {
      report->kind = ReportKind::SetupFailed;
      report->err = errno;
      child_append(report->what, sizeof report->what, "setrlimit ");
      child_append(report->what, sizeof report->what, r.name);
      return false;
    }
  }
  return true;
}

bool drop_privileges(Report* report) {
  auto fail = [&](const char* what) {
    report->kind = ReportKind::SetupFailed;
    report->err = errno;
    child_append(report->what, sizeof report->what, what);
    return false;
  };
  // Bounding set first (needs CAP_SETPCAP, which we still have).
  for (int cap = 0; cap <= 63; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return fail("prctl(PR_CAPBSET_DROP)");
  }
  // uid 0 must not regain capabilities on execve, nor keep them through setuid games.
  unsigned long bits =
      SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED;
#ifdef SECBIT_NO_CAP_AMBIENT_RAISE
  bits |= SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
#endif
  if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) return fail("prctl(PR_SET_SECUREBITS)");
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return fail("prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &hdr, data) != 0) return fail("capset");
  // setuid binaries and file capabilities grant nothing from here on (A12).
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail("prctl(PR_SET_NO_NEW_PRIVS)");
  return true;
}

}  // namespace kg::sandbox::limits

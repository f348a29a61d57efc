// cgroup: one cgroup per box for memory, process count and whole-tree CPU accounting.
// cgroup v2 where its memory and pids controllers are available, else the v1 memory, pids and
// cpuacct hierarchies, else nothing (limits.cc then falls back to rlimits).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "kernelgate/sandbox.h"

namespace kg::sandbox::cgroup {

// Which hierarchy boxes use, for diagnostics ("cgroup2 at ...", or v1 paths and why not v2).
std::string describe_layout();

// The supervisor process that created a box cgroup. Box cgroups are named
// kg-<pid>-<start>-<pidns>-<n>: the pid, its start time (/proc/<pid>/stat field 22, clock ticks
// since boot) so that a reused pid is not taken for the owner, and the inode of its pid namespace
// so that pids of another namespace are never judged.
struct BoxOwner {
  pid_t pid = 0;
  unsigned long long start_ticks = 0;
  unsigned long long pid_ns = 0;
  bool legacy = false;  // an older kg-<pid>-<n> name: only the pid is known
};
std::optional<BoxOwner> parse_box_name(const std::string& name);
// This process, as its boxes' names carry it.
const BoxOwner& self_owner();
// Whether the owner still runs. An owner of another pid namespace counts as alive (unknowable).
bool owner_alive(const BoxOwner& owner);

struct Sweep {
  std::vector<std::string> removed;  // stale box cgroup directories removed
  std::vector<std::string> failed;   // stale ones that could not be removed, with why
  int killed = 0;                    // processes found in stale cgroups and killed
};
// Removes the box cgroups whose owner is gone from the directories where this process creates
// its own boxes: kills what is still inside (cgroup.kill on v2, else SIGKILL per pid), then
// removes the directories depth-first. Box cgroups of live supervisors are never touched, nor,
// unless this process is root, those another user owns.
// Runs once per process before its first box (startup_sweep()); callable again.
Sweep sweep_stale();
Sweep sweep_stale_in(const std::string& base);
const Sweep& startup_sweep();

class Cgroup {
 public:
  // nullptr when no usable hierarchy exists. Throws only on unexpected errors after creation.
  static std::unique_ptr<Cgroup> create(const Limits& limits);
  ~Cgroup();  // kills what is left inside and removes the directories
  Cgroup(const Cgroup&) = delete;
  Cgroup& operator=(const Cgroup&) = delete;

  void attach(pid_t pid);  // throws
  // The box's cgroup v2 directory (for clone3's CLONE_INTO_CGROUP); "" under v1.
  std::string v2_dir() const { return v2_ && !dirs_.empty() ? dirs_.front() : std::string(); }
  bool limits_memory() const { return !mem_.empty(); }
  bool limits_pids() const { return !pids_.empty(); }
  bool accounts_cpu() const { return !cpu_.empty(); }
  bool oom_killed() const;
  double cpu_seconds() const;   // < 0 when unknown
  long peak_memory_kb() const;  // < 0 when unknown
  void kill_all();
  const std::string& describe() const { return what_; }
  const std::vector<std::string>& directories() const { return dirs_; }

 private:
  Cgroup() = default;
  bool v2_ = false;
  std::vector<std::string> dirs_;  // every directory we created (removed in reverse)
  std::string mem_, pids_, cpu_;   // directories holding each controller's files
  std::string what_;
};

}  // namespace kg::sandbox::cgroup

// cgroup: one cgroup per box for memory, process count and whole-tree CPU accounting.
// cgroup v2 where its memory and pids controllers are available, else the v1 memory, pids and
// cpuacct hierarchies, else nothing (limits.cc then falls back to rlimits).
#pragma once

#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

#include "kernelgate/sandbox.h"

namespace kg::sandbox::cgroup {

// Which hierarchy boxes use, for diagnostics ("cgroup2 at ...", or v1 paths and why not v2).
std::string describe_layout();

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
  double cpu_seconds() const;  // < 0 when unknown
  long peak_memory_kb() const; // < 0 when unknown
  void kill_all();
  const std::string& describe() const { return what_; }

 private:
  Cgroup() = default;
  bool v2_ = false;
  std::vector<std::string> dirs_;  // every directory we created (removed in reverse)
  std::string mem_, pids_, cpu_;   // directories holding each controller's files
  std::string what_;
};

}  // namespace kg::sandbox::cgroup

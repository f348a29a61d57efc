// limits: resource limits and privilege drop applied to the payload right before exec.
#pragma once

#include <sys/resource.h>
#include <vector>

#include "kernelgate/sandbox.h"
#include "util.h"

namespace kg::sandbox::limits {

struct Rlimit {
  int resource;
  rlimit value;
  const char* name;
};

// The rlimits for a Spec. `memory_by_cgroup` / `pids_by_cgroup`: whether a cgroup enforces
// memory / process count (then RLIMIT_AS / RLIMIT_NPROC are not used); `cpu_by_cgroup`: whether
// the supervisor accounts the tree's CPU time (then RLIMIT_CPU is only a backstop one second later).
std::vector<Rlimit> plan(const Spec& spec, bool memory_by_cgroup, bool pids_by_cgroup, bool cpu_by_cgroup);

// Child side, no allocation: setrlimit each; on failure fill `report` and return false.
bool apply(const std::vector<Rlimit>& rl, Report* report);

// Child side: no_new_privs, non-dumpable, every capability dropped (bounding, ambient, effective,
// permitted, inheritable) and securebits locked so that uid 0 inside gains nothing on exec.
bool drop_privileges(Report* report);

}  // namespace kg::sandbox::limits

// mounts: the child's filesystem view. The supervisor turns a Spec into a flat list of MountOps
// (all paths precomputed); the cloned child runs them in order without allocating.
#pragma once

#include <string>
#include <vector>

#include "kernelgate/sandbox.h"
#include "util.h"

namespace kg::sandbox::mounts {

struct MountOp {
  enum Kind { Mkdir, Touch, Symlink, Mount, Remount, PivotRoot, Chdir } kind;
  std::string a;  // Mkdir/Touch/Chdir: path; Symlink: target; Mount: source; PivotRoot: new root
  std::string b;  // Symlink: link path; Mount/Remount: mount point
  std::string fstype;
  unsigned long flags = 0;
  std::string data;
  bool optional = false;  // failure is ignored (device nodes that may be absent, ...)
};

// Where the new root is assembled (a private mount in the child's namespace; the host directory
// itself is only a mount point and stays empty). Created by the supervisor.
std::string staging_dir();

// Builds the list of operations: tmpfs root, system read-only binds, Spec::binds, scratch,
// /dev, /proc, pivot_root, root remounted read-only, chdir(workdir). Throws on a bad Spec
// (a bind source that does not exist, a relative path).
std::vector<MountOp> plan(const Spec& spec, const std::string& staging);

// The read-only directories and files of the box that hold the runtime (the system trees, the
// loader's /etc entries, Spec's read-only binds): where a run box's watched opens may go
// (file_opens.h).
std::vector<std::string> read_only_trees(const Spec& spec);

// Child side: runs the ops. On failure fills `report` (what + errno) and returns false.
bool run(const std::vector<MountOp>& ops, Report* report);

}  // namespace kg::sandbox::mounts

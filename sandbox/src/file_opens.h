// file_opens: the supervisor's check of the files a run box opens once it watches them
// (Process::watch_opens). In the run profiles the first-stage filter hands every open() and
// openat() to the supervisor's listener; before watch_opens() each goes ahead, after it only
// read-only opens of the runtime's own files do, and every other is refused (EACCES) and kept.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kg::sandbox::file_opens {

// Whether an open of `path` (as the box passed it) is one the runtime makes: an absolute path
// without "." or ".." components under one of `trees` (the box's read-only system and bound
// directories), a harmless device node (/dev/null, /dev/urandom, the NVIDIA nodes), /sys, or a
// /proc entry that describes the calling process itself or the machine (never another process's,
// and no magic link: root, cwd, exe, fd, map_files, mem). `own_pid`: the caller's process id as
// the box sees it (its /proc/<own_pid> is its own /proc/self), 0 when unknown. Pure.
bool runtime_path(const std::string& path, const std::vector<std::string>& trees, pid_t own_pid = 0);

// The process id of host thread `tid`'s process in the innermost pid namespace (the box's), from
// the host's /proc; 0 when unknown.
pid_t pid_in_box(pid_t tid);

// The NUL-terminated path at `address` in thread `tid`'s memory (process_vm_readv, at most
// PATH_MAX bytes); nothing when it cannot be read.
std::optional<std::string> read_path(pid_t tid, uint64_t address);

// A path as evidence: control and non-ASCII bytes escaped (\xNN), capped at 256 characters.
std::string printable(const std::string& path);

}  // namespace kg::sandbox::file_opens

// kernelgate sandbox: runs one untrusted command in an isolated, limited child.
//
// Theory of operation (docs/sandbox.md has the long form):
//   supervisor --clone(new mount/pid/net/ipc/uts/cgroup[/user] ns)--> init child
//   the child builds a tmpfs root from read-only binds + a size-capped scratch,
//   pivot_roots into it, mounts a fresh /proc and a minimal /dev, drops to the
//   profile's limits, closes every fd but the ones in Spec::pass_fds, sets
//   no_new_privs, installs the profile's seccomp filter, and execs the command.
//   The supervisor enforces wall time, collects rusage, and folds everything into
//   a Record (isolate's meta file, as JSON).
//
// The sandbox knows nothing about kernels.
#pragma once

#include "kernelgate/runner_filter.h"  // kg-runner's second stage (tighten_runner_filter)
#include "kernelgate/sandbox_profile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kg::sandbox {

// Which syscall filter and which device nodes the child gets: Profile (sandbox_profile.h).
const char* profile_name(Profile p);
bool parse_profile(const std::string& name, Profile* out);

// isolate-style status letters.
enum class Status { OK, RE, SG, TO, ML, OL, SV, XX };
const char* status_name(Status s);

struct Bind {
  std::string path;  // host path, bound at the same path inside
  bool writable = false;
};

struct Limits {
  double cpu_s = 10;                    // RLIMIT_CPU (and accounted over the whole tree)
  double wall_s = 30;                   // enforced by the supervisor
  uint64_t memory_mb = 4096;            // cgroup v2 memory.max where possible, else RLIMIT_AS/DATA fallback
  int max_processes = 64;               // pids.max / RLIMIT_NPROC
  int max_open_files = 256;             // RLIMIT_NOFILE
  uint64_t max_file_mb = 256;           // RLIMIT_FSIZE
  uint64_t max_output_bytes = 1 << 20;  // stdout + stderr captured; over it: OL and the tree is killed
  uint64_t scratch_mb = 512;            // tmpfs size cap of the scratch dir
};

struct Spec {
  Profile profile = Profile::RunCpu;
  std::vector<std::string> argv;     // argv[0] is an absolute path inside the sandbox
  std::vector<std::string> env;      // the child's whole environment ("K=V"); nothing is inherited
  std::vector<Bind> binds;           // besides the profile's own system binds (/usr, /lib*, /bin, /etc/ld.so.cache ...)
  std::string scratch_dir = "/tmp";  // tmpfs, noexec unless scratch_exec, writable
  bool scratch_exec = false;         // the compile profile needs exec of nothing in scratch; runners dlopen from binds
  std::string workdir = "/tmp";      // chdir target inside
  std::vector<int> pass_fds;         // host fds given to the child as 3, 4, ... in this order
  Limits limits;
  // When set, stdout/stderr are captured (capped at limits.max_output_bytes) into the Record;
  // otherwise they pass through to the supervisor's own stdout/stderr, still counted and capped.
  bool capture_output = true;
  // Development aid for establishing a profile (a "logging pass"): syscalls outside the profile
  // are allowed to continue and listed in Record::message instead of killing the box. Never use
  // it for untrusted code.
  bool audit_syscalls = false;
};

// The result record (isolate's meta file). Every field is always present in to_json().
struct Record {
  Status status = Status::XX;
  int exit_code = 0;
  int signal = 0;
  std::string syscall;  // name of the syscall that violated the filter, when known
  double cpu_s = 0;
  double wall_s = 0;
  long max_rss_kb = 0;
  std::string message;
  std::string stdout_text;      // captured, capped
  std::string stderr_text;      // captured, capped
  std::string to_json() const;  // status, exit_code, signal, syscall, cpu_s, wall_s, max_rss_kb, message
};

// An open() or openat() of a run box that the supervisor refused (Process::watch_opens).
struct RefusedOpen {
  std::string syscall;  // "openat"
  std::string path;     // as the box passed it, control bytes escaped; "(unreadable)" when it could not be read
};

// A running sandboxed child. RAII: destroying a Process kills the whole tree and reaps it.
class Process {
 public:
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const;
  // Blocks until the child tree is gone (exit, signal, or a limit), returns the record.
  Record wait();
  // The record as of now, the tree still running: everything it wrote before the call (read from
  // the pipes by the monitor first), a syscall the filter refused, and why the supervisor killed
  // it if it did (status OK otherwise; no exit code, signal or peak memory yet). The final record
  // once the tree is gone. For a caller that knows the box's work is done (the runner said so) and
  // need not wait for its teardown.
  Record snapshot();
  // Kills the whole tree now (the record says why, from `reason`).
  void kill(const std::string& reason);
  // The wall-clock limit counts from now on (a box started ahead of its work, e.g. a runner
  // waiting in a pool, gets its whole wall_s for the work). The CPU limit is unchanged: an idle
  // box spends none, and its start-up was always counted. Record::wall_s still counts from the start.
  void restart_clock();
  // Run profiles: until this call every open() and openat() of the box goes ahead (start-up);
  // from it on only read-only opens of the runtime's own files do (the box's system and
  // read-only bound trees, harmless device nodes, /sys, the caller's own /proc entries), and
  // every other fails with EACCES and is kept for take_refused_opens(). Opens for writing stay
  // the second-stage filter's (they kill). No effect in the compile profile.
  void watch_opens();
  // The refused opens since the last call (at most 64 are kept between two calls).
  std::vector<RefusedOpen> take_refused_opens();

  struct Impl;

 private:
  friend std::unique_ptr<Process> start(const Spec&);
  explicit Process(std::unique_ptr<Impl>);
  std::unique_ptr<Impl> impl_;
};

// Starts the child. Throws std::runtime_error (with the failing call and errno) when the
// sandbox itself cannot be set up in the supervisor; failures inside the child after clone
// come back as status XX with the message.
std::unique_ptr<Process> start(const Spec& spec);

// start() + wait().
Record run(const Spec& spec);

}  // namespace kg::sandbox

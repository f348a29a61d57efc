// Helpers of the sandbox suites: specs for running attack programs, the no-leftover check, and
// host files that must stay unchanged.
#pragma once

#include <dirent.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "cgroup.h"
#include "kernelgate/sandbox.h"

// Readable gtest output for the enums ("Which is: SV" rather than bytes).
namespace kg::sandbox {
inline void PrintTo(Profile p, std::ostream* os) { *os << profile_name(p); }
inline void PrintTo(Status s, std::ostream* os) { *os << status_name(s); }
}  // namespace kg::sandbox

namespace kgtest {

namespace sb = kg::sandbox;

// Whether boxes get a cgroup that limits memory and accounts the tree's CPU time (root with a
// usable hierarchy). Without one the sandbox falls back to rlimits, which cannot report ML and
// count CPU per process: the tests of those properties skip.
inline bool cgroup_limits() {
  static int have = -1;
  if (have < 0) {
    auto cg = kg::sandbox::cgroup::Cgroup::create(kg::sandbox::Limits{});
    have = cg && cg->limits_memory() && cg->limits_pids() && cg->accounts_cpu();
  }
  return have == 1;
}
#define KG_NEED_CGROUP()                                                                                                               \
  do {                                                                                                                                 \
    if (!kgtest::cgroup_limits())                                                                                                      \
      GTEST_SKIP() << "no usable cgroup (" << kg::sandbox::cgroup::describe_layout() << "): memory and tree CPU fall back to rlimits"; \
  } while (0)

inline std::string attack(const std::string& name) { return std::string(KG_ATTACK_DIR) + "/kg_attack_" + name; }
inline std::string control(const std::string& name) { return std::string(KG_ATTACK_DIR) + "/kg_control_" + name; }

// A unique marker in every box's environment, so leftovers can be found among the host's processes.
inline std::string next_marker() {
  static std::atomic<int> n{0};
  return "KG_SANDBOX_TEST_RUN=" + std::to_string(::getpid()) + "-" + std::to_string(n++);
}

inline sb::Spec spec(sb::Profile profile, std::vector<std::string> argv) {
  sb::Spec s;
  s.profile = profile;
  s.argv = std::move(argv);
  s.env = {"PATH=/usr/bin:/bin", "LANG=C"};
  s.binds = {{KG_ATTACK_DIR, false}};
  s.limits.cpu_s = 5;
  s.limits.wall_s = 10;
  s.limits.memory_mb = 256;
  s.limits.max_processes = 32;
  s.limits.scratch_mb = 64;
  s.limits.max_output_bytes = 1 << 20;
  return s;
}

// Host processes whose environment carries `marker`.
inline std::vector<int> processes_with(const std::string& marker) {
  std::vector<int> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string env = ss.str();
    if (env.find(marker + '\0') != std::string::npos || env.find(marker) != std::string::npos) out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

// Runs the spec and checks what every run must satisfy: nothing of the box is left running on the
// host, and the record is well-formed.
inline sb::Record box(sb::Spec s) {
  std::string marker = next_marker();
  s.env.push_back(marker);
  sb::Record r = sb::run(s);
  std::vector<int> left = processes_with(marker);
  EXPECT_TRUE(left.empty()) << "processes left behind: " << left.size() << " (first " << (left.empty() ? 0 : left[0]) << ")";
  EXPECT_GE(r.wall_s, 0);
  return r;
}

inline std::string describe(const sb::Record& r) {
  return r.to_json() + "\n--- stdout ---\n" + r.stdout_text.substr(0, 2000) + "\n--- stderr ---\n" + r.stderr_text.substr(0, 2000);
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

// A fresh host directory for one test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/kg-sandbox-test-XXXXXX";
    char* p = ::mkdtemp(tmpl);
    if (p) path_ = p;
    ::chmod(path_.c_str(), 0755);
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path_ + "'";
    if (!path_.empty()) (void)!std::system(cmd.c_str());
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A copy of a build-tree binary in `dir` (mode 0755), for a test that runs it as an unprivileged
// user: the build tree may sit where only root can enter (a checkout in /root, mode 0700).
inline std::string stage_binary(const TempDir& dir, const std::string& binary) {
  const std::string copy = dir / binary.substr(binary.rfind('/') + 1);
  write_file(copy, read_file(binary));
  if (::chmod(copy.c_str(), 0755) != 0) ADD_FAILURE() << "chmod " << copy << ": " << std::strerror(errno);
  return copy;
}

// Snapshot of a host file: content, mode, mtime.
struct Snapshot {
  std::string content;
  mode_t mode = 0;
  long mtime_ns = 0;
  bool exists = false;
  static Snapshot of(const std::string& path) {
    Snapshot s;
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
      s.exists = true;
      s.mode = st.st_mode;
      s.mtime_ns = st.st_mtim.tv_sec * 1000000000L + st.st_mtim.tv_nsec;
      s.content = read_file(path);
    }
    return s;
  }
  bool operator==(const Snapshot& o) const {
    return exists == o.exists && content == o.content && mode == o.mode && mtime_ns == o.mtime_ns;
  }
};

inline bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

}  // namespace kgtest

// file_opens: see file_opens.h.
#include "file_opens.h"

#include <linux/limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kg::sandbox::file_opens {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// "/a//b/" -> {"a", "b"}; false for a relative path or one with a "." or ".." component: such a
// path can name something other than what it spells (a symlinked directory followed by "..").
bool components(const std::string& path, std::vector<std::string>* out) {
  if (path.empty() || path[0] != '/') return false;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) {
      std::string c = path.substr(i, j - i);
      if (c == "." || c == "..") return false;
      out->push_back(std::move(c));
    }
    i = j;
  }
  return true;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Entries of a process's own /proc directory that libc, OpenMP, libtorch and the CUDA driver read.
// Magic links (root, cwd, exe, fd/N, map_files) and the memory are not among them.
bool own_proc_entry(const std::vector<std::string>& rest) {
  static const char* const kLeaves[] = {"status", "stat",      "statm",   "maps",    "smaps",         "smaps_rollup", "numa_maps",
                                        "cgroup", "mountinfo", "mounts",  "limits",  "comm",          "auxv",         "cpuset",
                                        "sched",  "io",        "cmdline", "environ", "oom_score_adj", "task"};
  if (rest.empty()) return false;
  size_t leaf = 0;
  // task/<tid>/<entry>: a thread of the calling process (its own pid namespace holds no other).
  if (rest.size() == 3 && rest[0] == "task" && all_digits(rest[1])) leaf = 2;
  else if (rest.size() != 1) return false;
  return std::any_of(std::begin(kLeaves), std::end(kLeaves), [&](const char* l) { return rest[leaf] == l; });
}

bool proc_path(const std::vector<std::string>& c, pid_t own_pid) {
  if (c.size() < 2) return false;
  const bool own = c[1] == "self" || c[1] == "thread-self" || (own_pid > 0 && c[1] == std::to_string(own_pid));
  if (own) return own_proc_entry({c.begin() + 2, c.end()});
  // The machine, not a process: what thread pools and the CUDA driver size themselves by.
  static const char* const kMachine[] = {"cpuinfo", "meminfo", "stat", "filesystems", "devices"};
  if (c.size() == 2) return std::any_of(std::begin(kMachine), std::end(kMachine), [&](const char* m) { return c[1] == m; });
  return c[1] == "sys" || (c[1] == "driver" && c[2] == "nvidia");
}

// The NVIDIA nodes include /dev/nvidia-caps/nvidia-capN (MIG); the box's /dev holds nothing else
// of the driver's.
bool dev_path(const std::vector<std::string>& c) {
  if (c.size() >= 2 && starts_with(c[1], "nvidia")) return true;
  static const char* const kNodes[] = {"null", "zero", "full", "random", "urandom"};
  return c.size() == 2 && std::any_of(std::begin(kNodes), std::end(kNodes), [&](const char* n) { return c[1] == n; });
}

}  // namespace

bool runtime_path(const std::string& path, const std::vector<std::string>& trees, pid_t own_pid) {
  std::vector<std::string> c;
  if (!components(path, &c) || c.empty()) return false;
  if (c[0] == "proc") return proc_path(c, own_pid);
  if (c[0] == "dev") return dev_path(c);
  if (c[0] == "sys") return true;
  std::string clean;
  for (const std::string& part : c) clean += "/" + part;
  for (const std::string& tree : trees) {
    std::vector<std::string> t;
    if (!components(tree, &t) || t.empty()) continue;
    std::string root;
    for (const std::string& part : t) root += "/" + part;
    if (clean == root || starts_with(clean, root + "/")) return true;
  }
  return false;
}

pid_t pid_in_box(pid_t tid) {
  FILE* f = std::fopen(("/proc/" + std::to_string(tid) + "/status").c_str(), "re");
  if (!f) return 0;
  char line[256];
  pid_t innermost = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "NStgid:", 7) == 0)
      for (char* tok = std::strtok(line + 7, " \t\n"); tok; tok = std::strtok(nullptr, " \t\n")) innermost = std::atoi(tok);
  std::fclose(f);
  return innermost;
}

std::optional<std::string> read_path(pid_t tid, uint64_t address) {
  std::string out;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  char buf[4096];
  // Page by page: a path near the end of a mapping must not fail because the next page is absent.
  while (out.size() < PATH_MAX) {
    const uint64_t at = address + out.size();
    const size_t want = std::min<uint64_t>(sizeof buf, page - at % page);
    iovec local{buf, want}, remote{reinterpret_cast<void*>(at), want};
    const ssize_t n = ::process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (n <= 0) return std::nullopt;
    const void* nul = std::memchr(buf, 0, static_cast<size_t>(n));
    if (nul) return out.append(buf, static_cast<const char*>(nul) - buf);
    out.append(buf, static_cast<size_t>(n));
  }
  return std::nullopt;
}

std::string printable(const std::string& path) {
  std::string out;
  for (unsigned char ch : path) {
    if (out.size() >= 256) return out + "...";
    if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
      out += static_cast<char>(ch);
    } else {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", ch);
      out += esc;
    }
  }
  return out;
}

}  // namespace kg::sandbox::file_opens

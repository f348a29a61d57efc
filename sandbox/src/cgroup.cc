// cgroup: discovery (once per process), per-box creation, accounting and tree kill.
#include "cgroup.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <mutex>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "util.h"

namespace kg::sandbox::cgroup {
namespace {

bool read_file(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

bool write_file(const std::string& path, const std::string& text, int* err = nullptr) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) {
    if (err) *err = errno;
    return false;
  }
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    if (err) *err = errno;
    return false;
  }
  return true;
}

// "key value" line lookup (memory.events, cpu.stat, memory.oom_control).
long long keyed(const std::string& path, const std::string& key) {
  std::string text;
  if (!read_file(path, &text)) return -1;
  std::istringstream in(text);
  std::string k;
  long long v;
  while (in >> k >> v)
    if (k == key) return v;
  return -1;
}

long long single(const std::string& path) {
  std::string text;
  if (!read_file(path, &text)) return -1;
  try {
    return std::stoll(text);
  } catch (...) { return -1; }
}

bool has_word(const std::string& text, const std::string& w) {
  std::istringstream in(text);
  std::string x;
  while (in >> x)
    if (x == w) return true;
  return false;
}

// Where our process sits, per hierarchy. Found once.
struct Layout {
  std::string v2_base;  // cgroup2 directory we may create children in ("" if unusable)
  std::string note;     // why v2 is not used
  std::string v1_memory, v1_pids, v1_cpuacct;
};

// cgroup v2: make `memory` and `pids` available to children of our own cgroup. Root (or the
// owner of the subtree) may enable them along the path from the mount down; our own cgroup must
// then hold no processes ("no internal processes"), so its processes - this supervisor and
// whatever shares its cgroup - move into a leaf `kg-supervisor` first. Returns the directory in
// which boxes are created, or "" (with the reason in *note).
std::string delegate_v2(const std::string& mount, const std::string& path, std::string* note) {
  std::string dir = mount;
  std::vector<std::string> chain = {mount};
  std::istringstream parts(path);
  std::string part;
  while (std::getline(parts, part, '/'))
    if (!part.empty()) chain.push_back(chain.back() + "/" + part);
  auto has_both = [](const std::string& file) {
    std::string t;
    return read_file(file, &t) && has_word(t, "memory") && has_word(t, "pids");
  };
  // A supervisor started from a process that an earlier supervisor already moved into its leaf:
  // boxes go next to that leaf rather than ever deeper.
  if (chain.size() > 1 && chain.back().size() > 14 && chain.back().compare(chain.back().size() - 14, 14, "/kg-supervisor") == 0 &&
      has_both(chain[chain.size() - 2] + "/cgroup.subtree_control"))
    return chain[chain.size() - 2];
  std::string base = chain.back();
  // Ancestors (not our own cgroup): enable in their subtree_control when missing.
  for (size_t i = 0; i + 1 < chain.size(); ++i) {
    if (has_both(chain[i] + "/cgroup.subtree_control")) continue;
    int err = 0;
    if (!write_file(chain[i] + "/cgroup.subtree_control", "+memory +pids", &err)) {
      *note = "cannot enable memory+pids in " + chain[i] + ": " + std::strerror(err);
      return "";
    }
  }
  if (!has_both(base + "/cgroup.controllers")) {
    *note = base + " lacks the memory/pids controllers";
    return "";
  }
  if (has_both(base + "/cgroup.subtree_control")) return base;
  int err = 0;
  if (write_file(base + "/cgroup.subtree_control", "+memory +pids", &err)) return base;
  if (err != EBUSY) {
    *note = "cannot enable memory+pids in " + base + ": " + std::strerror(err);
    return "";
  }
  std::string leaf = base + "/kg-supervisor";
  if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) {
    *note = "mkdir " + leaf + ": " + std::strerror(errno);
    return "";
  }
  for (int round = 0; round < 5; ++round) {
    std::string procs;
    read_file(base + "/cgroup.procs", &procs);
    std::istringstream in(procs);
    std::string pid;
    while (in >> pid) write_file(leaf + "/cgroup.procs", pid);
    if (write_file(base + "/cgroup.subtree_control", "+memory +pids", &err)) return base;
  }
  *note = "cannot enable memory+pids in " + base + " after moving its processes: " + std::strerror(err);
  return "";
}

Layout discover() {
  Layout L;
  std::string v2_mount;
  struct V1 {
    std::string mount;
  } mem, pids, cpuacct;
  std::ifstream mi("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mi, line)) {
    // id parent maj:min root mountpoint opts [optional...] - fstype source superopts
    std::istringstream in(line);
    std::string id, parent, dev, root, mnt, opts, tok;
    in >> id >> parent >> dev >> root >> mnt >> opts;
    while (in >> tok && tok != "-") {}
    std::string fstype, source, super;
    in >> fstype >> source >> super;
    if (root != "/") continue;  // a bind of a sub-cgroup: skip
    if (fstype == "cgroup2" && v2_mount.empty()) v2_mount = mnt;
    if (fstype == "cgroup") {
      std::string s = "," + super + ",";
      if (s.find(",memory,") != std::string::npos && mem.mount.empty()) mem.mount = mnt;
      if (s.find(",pids,") != std::string::npos && pids.mount.empty()) pids.mount = mnt;
      if (s.find(",cpuacct,") != std::string::npos && cpuacct.mount.empty()) cpuacct.mount = mnt;
    }
  }
  std::ifstream cg("/proc/self/cgroup");
  std::string v2_path, mem_path, pids_path, cpu_path;
  while (std::getline(cg, line)) {
    auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string ctrls = "," + line.substr(a + 1, b - a - 1) + ",", path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && ctrls == ",,") v2_path = path;
    if (ctrls.find(",memory,") != std::string::npos) mem_path = path;
    if (ctrls.find(",pids,") != std::string::npos) pids_path = path;
    if (ctrls.find(",cpuacct,") != std::string::npos) cpu_path = path;
  }
  auto join = [](const std::string& m, const std::string& p) { return p == "/" ? m : m + p; };
  if (!v2_mount.empty()) L.v2_base = delegate_v2(v2_mount, v2_path, &L.note);
  else L.note = "no cgroup2 mount";
  if (!mem.mount.empty() && !mem_path.empty()) L.v1_memory = join(mem.mount, mem_path);
  if (!pids.mount.empty() && !pids_path.empty()) L.v1_pids = join(pids.mount, pids_path);
  if (!cpuacct.mount.empty() && !cpu_path.empty()) L.v1_cpuacct = join(cpuacct.mount, cpu_path);
  return L;
}

const Layout& layout() {
  static std::once_flag once;
  static Layout L;
  std::call_once(once, [] { L = discover(); });
  return L;
}

std::string unique_name() {
  static std::atomic<unsigned> counter{0};
  const BoxOwner& me = self_owner();
  return "kg-" + std::to_string(me.pid) + "-" + std::to_string(me.start_ticks) + "-" + std::to_string(me.pid_ns) + "-" +
         std::to_string(counter++);
}

// Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); nullopt when the process
// does not exist. The fields after the command name are counted from its closing parenthesis,
// since the name itself may hold spaces and parentheses.
std::optional<unsigned long long> start_ticks_of(const std::string& pid) {
  std::string stat;
  if (!read_file("/proc/" + pid + "/stat", &stat)) return std::nullopt;
  auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i)
    if (!(in >> field)) return std::nullopt;
  try {
    return std::stoull(field);
  } catch (...) { return std::nullopt; }
}

bool all_digits(const std::string& s) { return !s.empty() && s.size() <= 20 && s.find_first_not_of("0123456789") == std::string::npos; }

std::vector<std::string> subdirectories(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != ".." && e->d_type == DT_DIR) out.push_back(dir + "/" + n);
  }
  ::closedir(d);
  return out;
}

// SIGKILL for every pid listed in `dir`/cgroup.procs: how many were listed, -1 when unreadable.
int kill_procs(const std::string& dir) {
  std::string text;
  if (!read_file(dir + "/cgroup.procs", &text)) return -1;
  std::istringstream in(text);
  pid_t pid;
  int n = 0;
  while (in >> pid) {
    ++n;
    ::kill(pid, SIGKILL);
  }
  return n;
}

// rmdir of an empty cgroup, retried while it is busy (its last process still exiting), at most
// `attempts` times a millisecond apart. 0 when this call removed it, ENOENT when it was gone
// already, else the errno.
int rmdir_when_idle(const std::string& dir, int attempts) {
  int err = 0;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    if (::rmdir(dir.c_str()) == 0) return 0;
    err = errno;
    if (err != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return err;
}

// SIGKILL for every process in `dir` and below (cgroup.kill first where the kernel has it, which
// also catches processes forking meanwhile). Returns how many were seen.
int kill_tree(const std::string& dir, bool top = true) {
  int seen = 0;
  if (top) write_file(dir + "/cgroup.kill", "1");
  for (int round = 0; round < 3; ++round) {
    const int now = kill_procs(dir);
    if (round == 0) seen = std::max(now, 0);
    if (now <= 0) break;
  }
  for (const std::string& sub : subdirectories(dir)) seen += kill_tree(sub, false);
  return seen;
}

// rmdir of `dir`, children first; a cgroup whose last process is still exiting is busy for a
// moment. Returns 0 when this call removed `dir`, ENOENT when it was gone already (its owner
// removed it between the listing and the check that it is gone, or another sweep did), else the
// errno, with what failed in *what.
int remove_tree(const std::string& dir, std::string* what) {
  for (const std::string& sub : subdirectories(dir))
    if (int err = remove_tree(sub, what); err && err != ENOENT) return err;
  const int err = rmdir_when_idle(dir, 1000);
  if (err && err != ENOENT) *what = "rmdir " + dir + ": " + std::strerror(err);
  return err;
}

// An unprivileged supervisor shares the box directory with root's when it was started from root's
// cgroup; root's stale boxes are root's to sweep (it could remove none of them, and would report
// each as left behind).
bool ours_to_sweep(const std::string& dir) {
  const uid_t me = ::geteuid();
  struct stat st {};
  return me == 0 || (::stat(dir.c_str(), &st) == 0 && st.st_uid == me);
}

}  // namespace

std::optional<BoxOwner> parse_box_name(const std::string& name) {
  if (name.compare(0, 3, "kg-") != 0) return std::nullopt;
  std::vector<std::string> parts;
  std::istringstream in(name.substr(3));
  std::string part;
  while (std::getline(in, part, '-')) {
    if (!all_digits(part)) return std::nullopt;
    parts.push_back(part);
  }
  if (parts.size() != 2 && parts.size() != 4) return std::nullopt;
  BoxOwner o;
  try {
    o.pid = static_cast<pid_t>(std::stol(parts[0]));
    if (parts.size() == 4) {
      o.start_ticks = std::stoull(parts[1]);
      o.pid_ns = std::stoull(parts[2]);
    }
  } catch (...) { return std::nullopt; }
  if (o.pid <= 0) return std::nullopt;
  o.legacy = parts.size() == 2;
  return o;
}

const BoxOwner& self_owner() {
  static const BoxOwner me = [] {
    BoxOwner o;
    o.pid = ::getpid();
    o.start_ticks = start_ticks_of("self").value_or(0);
    struct stat st {};
    if (::stat("/proc/self/ns/pid", &st) == 0) o.pid_ns = st.st_ino;
    return o;
  }();
  return me;
}

bool owner_alive(const BoxOwner& owner) {
  std::string pid = std::to_string(owner.pid);
  if (owner.legacy) return ::kill(owner.pid, 0) == 0 || errno != ESRCH;
  if (owner.pid_ns != self_owner().pid_ns) return true;
  std::optional<unsigned long long> start = start_ticks_of(pid);
  return start && *start == owner.start_ticks;
}

Sweep sweep_stale_in(const std::string& base) {
  Sweep out;
  for (const std::string& dir : subdirectories(base)) {
    std::optional<BoxOwner> owner = parse_box_name(dir.substr(dir.rfind('/') + 1));
    if (!owner || owner_alive(*owner) || !ours_to_sweep(dir)) continue;
    // A legacy name carries no start time and no namespace: its pid may be another one's, so
    // nothing in it is killed; a box with processes left then stays (rmdir refuses).
    if (!owner->legacy) out.killed += kill_tree(dir);
    std::string what;
    const int err = remove_tree(dir, &what);
    if (err == 0) out.removed.push_back(dir);
    else if (err != ENOENT) out.failed.push_back(what);
  }
  return out;
}

Sweep sweep_stale() {
  const Layout& L = layout();
  Sweep all;
  std::vector<std::string> done;
  for (const std::string& base : {L.v2_base, L.v1_memory, L.v1_pids, L.v1_cpuacct}) {
    if (base.empty() || std::find(done.begin(), done.end(), base) != done.end()) continue;
    done.push_back(base);
    Sweep s = sweep_stale_in(base);
    all.removed.insert(all.removed.end(), s.removed.begin(), s.removed.end());
    all.failed.insert(all.failed.end(), s.failed.begin(), s.failed.end());
    all.killed += s.killed;
  }
  return all;
}

const Sweep& startup_sweep() {
  static std::once_flag once;
  static Sweep S;
  std::call_once(once, [] {
    S = sweep_stale();
    // The operator learns of it once; a box that cannot be removed is named.
    if (!S.removed.empty())
      std::fprintf(stderr, "kernelgate sandbox: removed %zu stale box cgroup(s) of supervisors that are gone (%d process(es) killed)\n",
                   S.removed.size(), S.killed);
    for (const std::string& f : S.failed) std::fprintf(stderr, "kernelgate sandbox: stale box cgroup left: %s\n", f.c_str());
  });
  return S;
}

std::string describe_layout() {
  const Layout& L = layout();
  if (!L.v2_base.empty()) return "cgroup2 at " + L.v2_base;
  std::string out = "cgroup v1: memory=" + (L.v1_memory.empty() ? std::string("-") : L.v1_memory) +
                    " pids=" + (L.v1_pids.empty() ? std::string("-") : L.v1_pids) +
                    " cpuacct=" + (L.v1_cpuacct.empty() ? std::string("-") : L.v1_cpuacct);
  return out + " (v2: " + L.note + ")";
}

std::unique_ptr<Cgroup> Cgroup::create(const Limits& limits) {
  const Layout& L = layout();
  startup_sweep();
  std::unique_ptr<Cgroup> cg(new Cgroup());
  std::string name = unique_name();
  std::string mem_bytes = std::to_string(limits.memory_mb << 20);
  if (!L.v2_base.empty()) {
    std::string dir = L.v2_base + "/" + name;
    if (::mkdir(dir.c_str(), 0755) == 0) {
      cg->dirs_.push_back(dir);
      cg->v2_ = true;
      if (limits.memory_mb > 0 && write_file(dir + "/memory.max", mem_bytes)) {
        write_file(dir + "/memory.swap.max", "0");   // no escape into swap
        write_file(dir + "/memory.oom.group", "1");  // an OOM kills the whole box, not one victim
        cg->mem_ = dir;
      }
      if (write_file(dir + "/pids.max", std::to_string(limits.max_processes))) cg->pids_ = dir;
      cg->cpu_ = dir;  // cpu.stat exists in every v2 cgroup
      cg->what_ = "cgroup2 " + dir;
      return cg;
    }
  }
  auto v1 = [&](const std::string& base) -> std::string {
    if (base.empty()) return "";
    std::string dir = base + "/" + name;
    if (::mkdir(dir.c_str(), 0755) != 0) return "";
    cg->dirs_.push_back(dir);
    return dir;
  };
  std::string mem = v1(L.v1_memory);
  if (!mem.empty() && limits.memory_mb > 0 && write_file(mem + "/memory.limit_in_bytes", mem_bytes)) {
    write_file(mem + "/memory.memsw.limit_in_bytes", mem_bytes);  // swap counted too where enabled
    cg->mem_ = mem;
  }
  std::string pids = v1(L.v1_pids);
  if (!pids.empty() && write_file(pids + "/pids.max", std::to_string(limits.max_processes))) cg->pids_ = pids;
  cg->cpu_ = v1(L.v1_cpuacct);
  if (cg->dirs_.empty()) return nullptr;
  cg->what_ = "cgroup v1";
  return cg;
}

Cgroup::~Cgroup() {
  kill_all();
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) rmdir_when_idle(*it, 200);
}

void Cgroup::attach(pid_t pid) {
  std::string p = std::to_string(pid);
  for (const std::string& dir : dirs_) {
    int err = 0;
    if (!write_file(dir + "/cgroup.procs", p, &err)) throw_errno("write " + dir + "/cgroup.procs", err);
  }
}

bool Cgroup::oom_killed() const {
  if (mem_.empty()) return false;
  if (v2_) return keyed(mem_ + "/memory.events", "oom_kill") > 0 || keyed(mem_ + "/memory.events", "oom_group_kill") > 0;
  return keyed(mem_ + "/memory.oom_control", "oom_kill") > 0;
}

double Cgroup::cpu_seconds() const {
  if (cpu_.empty()) return -1;
  if (v2_) {
    long long us = keyed(cpu_ + "/cpu.stat", "usage_usec");
    return us < 0 ? -1 : us / 1e6;
  }
  long long ns = single(cpu_ + "/cpuacct.usage");
  return ns < 0 ? -1 : ns / 1e9;
}

long Cgroup::peak_memory_kb() const {
  if (mem_.empty()) return -1;
  long long b = single(mem_ + (v2_ ? "/memory.peak" : "/memory.max_usage_in_bytes"));
  return b < 0 ? -1 : static_cast<long>(b / 1024);
}

void Cgroup::kill_all() {
  if (dirs_.empty()) return;
  if (v2_ && write_file(dirs_[0] + "/cgroup.kill", "1")) return;
  for (int round = 0; round < 3; ++round) {
    bool any = false;
    for (const std::string& dir : dirs_) any |= kill_procs(dir) > 0;
    if (!any) return;
  }
}

}  // namespace kg::sandbox::cgroup

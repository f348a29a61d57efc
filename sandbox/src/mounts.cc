// mounts: building the minimal root of the box.
//
// Layout inside (everything read-only except the scratch tmpfs, /dev/shm and Spec's --rw binds):
//   /usr /bin /lib /lib64 /lib32 /sbin   read-only binds of the host's (symlinks copied as symlinks)
//   /etc/ld.so.cache /etc/alternatives ...  the few /etc entries the loader and toolchains read
//   Spec::binds                           at the same path, read-only unless writable
//   <scratch_dir>                         tmpfs, size-capped, nosuid,nodev,(noexec)
//   /proc                                 fresh proc of the child's pid namespace; read-only except
//                                         for run-cuda, where /proc/sys, /proc/sysrq-trigger ... are
//                                         still covered by read-only binds
//   /dev                                  tmpfs with null zero full random urandom (+ nvidia nodes for
//                                         run-cuda) bound from the host, fd/stdin/stdout/stderr links,
//                                         /dev/shm a size-capped tmpfs; /dev itself read-only
// The tmpfs root is remounted read-only after pivot_root. Binds are not recursive: submounts of
// a bound host directory are not visible inside.
#include "mounts.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kg::sandbox::mounts {
namespace {

constexpr unsigned long kRoBindFlags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV;

bool is_abs_clean(const std::string& p) {
  if (p.empty() || p[0] != '/') return false;
  return p.find("/../") == std::string::npos && p.find("/./") == std::string::npos &&
         !(p.size() >= 3 && p.compare(p.size() - 3, 3, "/..") == 0);
}

std::string strip_trailing_slash(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

class Planner {
 public:
  explicit Planner(std::string staging) : root_(std::move(staging)) {}

  // mkdir -p of `inside` (a path inside the box) under the staging root.
  void mkdirs(const std::string& inside) {
    std::string cur;
    size_t pos = 1;
    while (pos <= inside.size()) {
      size_t next = inside.find('/', pos);
      if (next == std::string::npos) next = inside.size();
      cur = inside.substr(0, next);
      if (!cur.empty() && std::find(made_.begin(), made_.end(), cur) == made_.end()) {
        made_.push_back(cur);
        ops_.push_back({MountOp::Mkdir, root_ + cur, "", "", 0, "", false});
      }
      pos = next + 1;
    }
  }
  void parent_dirs(const std::string& inside) {
    auto slash = inside.rfind('/');
    if (slash != std::string::npos && slash > 0) mkdirs(inside.substr(0, slash));
  }

  // A host path at the same place inside: symlink copied, dir or file bound.
  void bind(const std::string& host, bool writable, bool optional_missing, bool follow) {
    struct stat st;
    int rc = follow ? ::stat(host.c_str(), &st) : ::lstat(host.c_str(), &st);
    if (rc != 0) {
      if (optional_missing) return;
      throw_errno("stat bind source " + host);
    }
    if (S_ISLNK(st.st_mode)) {
      char target[PATH_MAX];
      ssize_t n = ::readlink(host.c_str(), target, sizeof target - 1);
      if (n < 0) throw_errno("readlink " + host);
      target[n] = 0;
      parent_dirs(host);
      made_.push_back(host);
      ops_.push_back({MountOp::Symlink, target, root_ + host, "", 0, "", false});
      return;
    }
    parent_dirs(host);
    if (S_ISDIR(st.st_mode)) {
      if (std::find(made_.begin(), made_.end(), host) == made_.end()) {
        made_.push_back(host);
        ops_.push_back({MountOp::Mkdir, root_ + host, "", "", 0, "", false});
      }
    } else {
      ops_.push_back({MountOp::Touch, root_ + host, "", "", 0, "", false});
    }
    ops_.push_back({MountOp::Mount, host, root_ + host, "", MS_BIND, "", false});
    // Writable binds are never executable: what a box writes (an artifact, a build tree) may only
    // run in a later box that binds it read-only.
    unsigned long fl = writable ? (MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC) : kRoBindFlags;
    ops_.push_back({MountOp::Remount, "", root_ + host, "", fl, "", false});
  }

  void device(const std::string& name) {
    std::string host = "/dev/" + name;
    struct stat st;
    if (::stat(host.c_str(), &st) != 0 || !(S_ISCHR(st.st_mode))) return;
    ops_.push_back({MountOp::Touch, root_ + host, "", "", 0, "", false});
    ops_.push_back({MountOp::Mount, host, root_ + host, "", MS_BIND, "", false});
    ops_.push_back({MountOp::Remount, "", root_ + host, "", MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NOEXEC, "", true});
  }

  void push(MountOp op) { ops_.push_back(std::move(op)); }
  const std::string& root() const { return root_; }
  std::vector<MountOp> take() { return std::move(ops_); }

 private:
  std::string root_;
  std::vector<std::string> made_;  // inside paths already created
  std::vector<MountOp> ops_;
};

// The system directories every profile needs to run a dynamically linked program.
const char* const kSystemPaths[] = {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"};
// /etc entries the dynamic loader and the toolchains read. Nothing secret: no shadow, no keys.
const char* const kEtcPaths[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                                 "/etc/localtime",   "/etc/passwd",     "/etc/group",        "/etc/nsswitch.conf"};
// /proc entries that stay read-only even when /proc is writable (run-cuda): writing them as uid 0
// reaches host-global state (core_pattern, sysrq, ...).
const char* const kProcRo[] = {"sys", "sysrq-trigger", "irq", "bus", "fs", "kcore", "timer_list"};

}  // namespace

std::string staging_dir() {
  uid_t uid = ::geteuid();
  std::string dir = uid == 0 ? "/tmp/.kernelgate-root" : "/tmp/.kernelgate-root-" + std::to_string(uid);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) throw_errno("mkdir " + dir);
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) throw_errno("lstat " + dir);
  if (!S_ISDIR(st.st_mode) || st.st_uid != uid) throw std::runtime_error("kernelgate sandbox: " + dir + " is not a directory owned by us");
  return dir;
}

std::vector<std::string> read_only_trees(const Spec& spec) {
  std::vector<std::string> trees(std::begin(kSystemPaths), std::end(kSystemPaths));
  // The accounts database is bound for start-up lookups; a call has no business reading it.
  for (const char* path : kEtcPaths)
    if (std::strcmp(path, "/etc/passwd") != 0 && std::strcmp(path, "/etc/group") != 0) trees.push_back(path);
  if (spec.profile == Profile::RunCuda) trees.push_back("/usr/local/nvidia");
  for (const Bind& b : spec.binds)
    if (!b.writable) trees.push_back(b.path);
  return trees;
}

std::vector<MountOp> plan(const Spec& spec, const std::string& staging) {
  Planner p(staging);
  const std::string& R = p.root();
  // First of all: nothing done in this mount namespace may propagate back to the host (on a
  // systemd host "/" is shared, and the copy made by CLONE_NEWNS would stay in its peer group).
  p.push({MountOp::Mount, "none", "/", "", MS_REC | MS_PRIVATE, "", false});
  // The root of the box: a small tmpfs holding only mount points (read-only after pivot).
  p.push({MountOp::Mount, "kernelgate", R, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755", false});

  for (const char* path : kSystemPaths) p.bind(path, false, true, false);
  for (const char* path : kEtcPaths) p.bind(path, false, true, true);
  // run-cuda: the driver's user-space libraries where GPU containers mount them (a separate
  // mount under /usr, so the /usr bind does not show it; ld.so.cache points there).
  if (spec.profile == Profile::RunCuda) p.bind("/usr/local/nvidia", false, true, true);

  // Scratch: size-capped tmpfs.
  std::string scratch = strip_trailing_slash(spec.scratch_dir);
  if (!is_abs_clean(scratch) || scratch == "/") throw std::runtime_error("kernelgate sandbox: bad scratch_dir " + spec.scratch_dir);
  p.mkdirs(scratch);
  unsigned long sflags = MS_NOSUID | MS_NODEV | (spec.scratch_exec ? 0 : MS_NOEXEC);
  std::string sdata = "size=" + std::to_string(spec.limits.scratch_mb) + "m,mode=1777";
  p.push({MountOp::Mount, "scratch", R + scratch, "tmpfs", sflags, sdata, false});

  // Spec binds (after the scratch, so a bind under it is visible), shallow ones first so a --rw
  // inside a --ro lands on top.
  std::vector<Bind> binds = spec.binds;
  for (auto& b : binds) {
    if (!is_abs_clean(b.path)) throw std::runtime_error("kernelgate sandbox: bind path must be absolute and clean: " + b.path);
    b.path = strip_trailing_slash(b.path);
    if (b.path == "/") throw std::runtime_error("kernelgate sandbox: refusing to bind /");
  }
  std::stable_sort(binds.begin(), binds.end(), [](const Bind& x, const Bind& y) {
    return std::count(x.path.begin(), x.path.end(), '/') < std::count(y.path.begin(), y.path.end(), '/');
  });
  for (const auto& b : binds) p.bind(b.path, b.writable, false, true);

  // /dev: a tmpfs with the few harmless nodes bound from the host.
  p.mkdirs("/dev");
  p.push({MountOp::Mount, "dev", R + "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755", false});
  for (const char* d : {"null", "zero", "full", "random", "urandom"}) p.device(d);
  if (spec.profile == Profile::RunCuda) {
    for (const char* d : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"}) p.device(d);
    for (int i = 0; i < 64; ++i) p.device("nvidia" + std::to_string(i));
  }
  p.push({MountOp::Symlink, "/proc/self/fd", R + "/dev/fd", "", 0, "", false});
  p.push({MountOp::Symlink, "/proc/self/fd/0", R + "/dev/stdin", "", 0, "", false});
  p.push({MountOp::Symlink, "/proc/self/fd/1", R + "/dev/stdout", "", 0, "", false});
  p.push({MountOp::Symlink, "/proc/self/fd/2", R + "/dev/stderr", "", 0, "", false});
  p.push({MountOp::Mkdir, R + "/dev/shm", "", "", 0, "", false});
  std::string shm = "size=" + std::to_string(std::min<uint64_t>(spec.limits.scratch_mb, 64)) + "m,mode=1777";
  p.push({MountOp::Mount, "shm", R + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, shm, false});
  p.push({MountOp::Remount, "", R + "/dev", "", MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755", false});

  // /proc of the new pid namespace (we are its init): it lists the box's processes only. hidepid
  // would add nothing (every process inside has the same uid).
  p.mkdirs("/proc");
  bool proc_rw = spec.profile == Profile::RunCuda;
  unsigned long pflags = MS_NOSUID | MS_NODEV | MS_NOEXEC | (proc_rw ? 0 : MS_RDONLY);
  p.push({MountOp::Mount, "proc", R + "/proc", "proc", pflags, "", false});
  if (proc_rw) {
    for (const char* e : kProcRo) {
      std::string path = R + "/proc/" + e;
      p.push({MountOp::Mount, path, path, "", MS_BIND, "", true});
      p.push({MountOp::Remount, "", path, "", kRoBindFlags | MS_NOEXEC, "", true});
    }
  }

  p.push({MountOp::PivotRoot, R, "", "", 0, "", false});
  // The root tmpfs becomes read-only: nothing new can be created outside scratch and rw binds.
  p.push({MountOp::Remount, "", "/", "", MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, "", false});
  p.push({MountOp::Chdir, spec.workdir, "", "", 0, "", false});
  return p.take();
}

bool run(const std::vector<MountOp>& ops, Report* report) {
  auto fail = [&](const char* call, const std::string& path) {
    report->kind = ReportKind::SetupFailed;
    report->err = errno;
    child_append(report->what, sizeof report->what, call);
    child_append(report->what, sizeof report->what, " ");
    child_append(report->what, sizeof report->what, path.c_str());
    return false;
  };
  for (const MountOp& op : ops) {
    int rc = 0;
    const char* call = "";
    const std::string* where = &op.a;
    switch (op.kind) {
      case MountOp::Mkdir:
        call = "mkdir";
        rc = ::mkdir(op.a.c_str(), 0755);
        if (rc != 0 && errno == EEXIST) rc = 0;
        break;
      case MountOp::Touch: {
        call = "create";
        int fd = ::open(op.a.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd >= 0) ::close(fd);
        rc = fd >= 0 || errno == EEXIST || errno == EROFS ? 0 : -1;
        break;
      }
      case MountOp::Symlink:
        call = "symlink";
        where = &op.b;
        rc = ::symlink(op.a.c_str(), op.b.c_str());
        if (rc != 0 && errno == EEXIST) rc = 0;
        break;
      case MountOp::Mount:
        call = op.fstype.empty() ? "mount(bind)" : "mount";
        where = &op.b;
        rc = ::mount(op.a.c_str(), op.b.c_str(), op.fstype.empty() ? nullptr : op.fstype.c_str(), op.flags,
                     op.data.empty() ? nullptr : op.data.c_str());
        if (rc != 0 && errno == EINVAL && op.flags == MS_BIND) {
          // In a user namespace a directory with (locked) mounts below it may only be bound
          // together with them. Those submounts keep the host's own flags.
          rc = ::mount(op.a.c_str(), op.b.c_str(), nullptr, MS_BIND | MS_REC, nullptr);
        }
        break;
      case MountOp::Remount:
        call = "mount(remount)";
        where = &op.b;
        rc = ::mount(nullptr, op.b.c_str(), nullptr, op.flags, op.data.empty() ? nullptr : op.data.c_str());
        if (rc != 0 && errno == EPERM && (op.flags & MS_BIND)) {
          // In a user namespace the source mount's flags (nodev, noexec, atime mode) are locked and
          // must be repeated in the remount.
          struct statvfs sv;
          if (::statvfs(op.b.c_str(), &sv) == 0) {
            unsigned long keep = 0;
            if (sv.f_flag & ST_NOSUID) keep |= MS_NOSUID;
            if (sv.f_flag & ST_NODEV) keep |= MS_NODEV;
            if (sv.f_flag & ST_NOEXEC) keep |= MS_NOEXEC;
            if (sv.f_flag & ST_NOATIME) keep |= MS_NOATIME;
            if (sv.f_flag & ST_NODIRATIME) keep |= MS_NODIRATIME;
            if (sv.f_flag & ST_RELATIME) keep |= MS_RELATIME;
            if (sv.f_flag & ST_RDONLY) keep |= MS_RDONLY;
            rc = ::mount(nullptr, op.b.c_str(), nullptr, op.flags | keep, nullptr);
          }
        }
        break;
      case MountOp::PivotRoot:
        call = "pivot_root";
        if (::chdir(op.a.c_str()) != 0) return fail("chdir", op.a);
        // pivot_root(".", ".") stacks the old root under the new one; detaching it leaves only the box.
        rc = static_cast<int>(::syscall(SYS_pivot_root, ".", "."));
        if (rc == 0) {
          call = "umount2(old root)";
          rc = ::umount2(".", MNT_DETACH);
        }
        if (rc == 0) {
          call = "chdir /";
          rc = ::chdir("/");
        }
        break;
      case MountOp::Chdir:
        call = "chdir";
        rc = ::chdir(op.a.c_str());
        break;
    }
    if (rc != 0 && !op.optional) return fail(call, *where);
  }
  return true;
}

}  // namespace kg::sandbox::mounts

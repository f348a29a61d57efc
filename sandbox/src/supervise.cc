// supervise: starting the box (clone + the supervisor's half of the set-up), then waiting on it:
// wall clock, whole-tree CPU, output caps, the seccomp listener, and the final Record.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <poll.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>

#include "cgroup.h"
#include "contain.h"
#include "fds.h"
#include "file_opens.h"
#include "kernelgate/sandbox.h"
#include "limits.h"
#include "mounts.h"
#include "namespaces.h"
#include "seccomp.h"
#include "util.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

namespace kg::sandbox {

using Clock = std::chrono::steady_clock;

namespace {
std::string secs(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", v);
  return buf;
}
}  // namespace

struct Launch {
  contain::ChildPlan plan;
  bool user_ns = false;
};

struct Pipe {
  UniqueFd r, w;
  explicit Pipe(const char* what) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) throw_errno(std::string("pipe2 ") + what);
    r.reset(p[0]);
    w.reset(p[1]);
  }
};

struct SocketPair {
  UniqueFd a, b;
  SocketPair(int type, const char* what) {
    int s[2];
    if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, s) != 0) throw_errno(std::string("socketpair ") + what);
    a.reset(s[0]);
    b.reset(s[1]);
  }
};

struct Process::Impl {
  pid_t pid = -1;
  UniqueFd pidfd;
  UniqueFd report_r, out_r, err_r, notify_r, listener;
  std::unique_ptr<cgroup::Cgroup> cg;
  Limits limits;
  bool capture = true;
  bool audit = false;
  Clock::time_point started;
  // The wall-clock limit's deadline (Clock ticks): started + wall_s, moved by restart_clock().
  std::atomic<Clock::rep> deadline_ticks{0};
  long long started_us = 0;     // CLOCK_MONOTONIC, for matching kernel log records
  pid_t payload_host_pid = -1;  // init's child, once it has sent the listener

  static pid_t first_child(pid_t parent) {
    std::string path = "/proc/" + std::to_string(parent) + "/task/" + std::to_string(parent) + "/children";
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return -1;
    char buf[64] = {};
    if (::read(fd.get(), buf, sizeof buf - 1) <= 0) return -1;
    return static_cast<pid_t>(std::atoi(buf));
  }
  bool reaped = false;
  Record rec;

  // Why the supervisor killed the tree (first reason wins).
  std::mutex mu;
  std::atomic<bool> forced{false};
  Status forced_status = Status::XX;
  std::string forced_message;
  std::string violation;             // syscall name from the listener
  std::vector<std::string> audited;  // audit mode: what would have been denied
  // Opens (run profiles): checked once watch_opens() was called, against these trees.
  bool watching_opens = false;
  std::vector<std::string> open_trees;
  std::vector<RefusedOpen> refused_opens;
  uint64_t output_bytes = 0;
  std::string stdout_text, stderr_text;
  // Reports from the child.
  bool have_payload_status = false;
  int payload_status = 0;
  std::string setup_error;
  std::string report_buf;

  // snapshot(): asked through `wake` (an eventfd the loop polls) and answered by the monitor, the
  // pipes' only reader, into `snap`; `monitor_done` once `rec` is final.
  UniqueFd wake;
  uint64_t snapshots_asked = 0;
  uint64_t snapshots_served = 0;
  Record snap;
  bool monitor_done = false;
  std::condition_variable snap_cv;

  std::thread monitor;  // runs loop() + reap_and_finish() from start() on

  // Caller holds mu. The pidfd cannot name a recycled pid; the cgroup catches anything that the
  // death of init would not (there is nothing, but it costs little).
  void signal_tree_locked() {
    if (pidfd) ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
    else if (pid > 0 && !reaped) ::kill(pid, SIGKILL);
    if (cg) cg->kill_all();
  }
  void force(Status s, const std::string& msg) {
    std::lock_guard<std::mutex> lock(mu);
    if (!forced) {
      forced = true;
      forced_status = s;
      forced_message = msg;
    }
    signal_tree_locked();
  }

  // Clone and the supervisor's half of the set-up (on the monitor thread). Throws; the caller
  // then calls abandon().
  void launch(Launch& l) {
    contain::ChildPlan& plan = l.plan;
    SocketPair sync(SOCK_STREAM, "sync");
    SocketPair notify(SOCK_SEQPACKET, "notify");
    Pipe report("report"), out("stdout"), err("stderr");
    plan.sync_fd = sync.b.get();
    // Without pidfd_open (Linux < 5.3) init has only PR_SET_PDEATHSIG, as before.
    UniqueFd self(static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)));
    plan.supervisor_pidfd = self ? self.get() : -1;
    plan.mounts_before_go = !l.user_ns;
    plan.report_fd = report.w.get();
    plan.notify_fd = notify.b.get();
    plan.stdout_fd = out.w.get();
    plan.stderr_fd = err.w.get();

    int new_pidfd = -1;
    unsigned long flags = namespaces::clone_flags(l.user_ns) | CLONE_PIDFD | SIGCHLD;
    started = Clock::now();
    restart_deadline(started);
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    started_us = ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
    // cgroup v2: the child starts inside its cgroup (clone3 CLONE_INTO_CGROUP). Moving it there
    // afterwards (cgroup.procs) waits for an RCU grace period in the kernel, which was the
    // largest single cost of a box's start-up; anything refused falls back to clone + attach.
    bool in_cgroup = false;
    long child = -1;
    if (cg && !cg->v2_dir().empty()) {
      UniqueFd dir(::open(cg->v2_dir().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
      if (dir) {
        clone_args args{};
        args.flags = (flags & ~0xffUL) | CLONE_INTO_CGROUP;
        args.pidfd = reinterpret_cast<uint64_t>(&new_pidfd);
        args.exit_signal = flags & 0xff;
        args.cgroup = static_cast<uint64_t>(dir.get());
        child = ::syscall(SYS_clone3, &args, sizeof args);
        in_cgroup = child >= 0;
      }
    }
    if (child < 0) child = ::syscall(SYS_clone, flags, nullptr, &new_pidfd, nullptr, 0);
    if (child < 0) throw_errno("clone(namespaces)");
    if (child == 0) contain::init_main(plan);  // never returns
    {
      std::lock_guard<std::mutex> lock(mu);
      pid = static_cast<pid_t>(child);
      pidfd.reset(new_pidfd);
    }
    report_r = std::move(report.r);
    out_r = std::move(out.r);
    err_r = std::move(err.r);
    notify_r = std::move(notify.a);
    // The child's ends now live only in the child (they close here when the locals go).
    if (l.user_ns) namespaces::write_id_maps(pid, ::geteuid(), ::getegid());
    if (cg && !in_cgroup) cg->attach(pid);
    char go = 'G';
    if (::send(sync.a.get(), &go, 1, MSG_NOSIGNAL) != 1) throw_errno("send go to sandbox init");
    for (int fd : {out_r.get(), err_r.get(), report_r.get()}) ::fcntl(fd, F_SETFL, O_NONBLOCK);
  }

  // launch() failed: kill and reap whatever was cloned, so nothing outlives the exception.
  void abandon() {
    std::lock_guard<std::mutex> lock(mu);
    if (pid > 0 && !reaped) {
      signal_tree_locked();
      int status;
      while (::waitpid(pid, &status, __WALL) < 0 && errno == EINTR) {}
    }
    reaped = true;
    cg.reset();
  }

  // The monitor thread: everything that must happen while the box runs, whether or not anyone
  // is in wait() (kg-runner's client talks to the box for a long time before waiting).
  void monitor_main() {
    try {
      loop();
    } catch (const std::exception& e) { force(Status::XX, std::string("supervisor: ") + e.what()); }
    try {
      reap_and_finish();
    } catch (const std::exception& e) {
      rec.status = Status::XX;
      rec.message = std::string("supervisor: ") + e.what();
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      cg.reset();  // remove the cgroup now that the tree is gone
      monitor_done = true;
    }
    snap_cv.notify_all();
  }

  // Audit mode's list of what would have been denied, as the record's message says it; "" when
  // there is none (mu held).
  std::string audit_message_locked() const {
    if (!audit || audited.empty()) return "";
    std::string list;
    for (const auto& a : audited) list += (list.empty() ? "" : ",") + a;
    return "audit: outside the profile: " + list;
  }

  // Reads what `fd` holds now, without waiting for more.
  void read_available(UniqueFd& fd, bool is_err) {
    while (fd) {
      pollfd q{fd.get(), POLLIN, 0};
      if (::poll(&q, 1, 0) != 1 || !read_output(fd, is_err)) return;
    }
  }

  // The record as of now (Process::snapshot), on the monitor thread: whatever the box wrote
  // before it was asked is in the pipes by now, and a syscall waiting in the listener is judged.
  void serve_snapshot() {
    uint64_t count;
    while (::read(wake.get(), &count, sizeof count) < 0 && errno == EINTR) {}
    read_available(out_r, false);
    read_available(err_r, true);
    if (listener) drain_listener();
    Record s;
    s.status = Status::OK;
    s.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
    if (cg) s.cpu_s = std::max(0.0, cg->cpu_seconds());
    s.stdout_text = stdout_text;
    s.stderr_text = stderr_text;
    {
      std::lock_guard<std::mutex> lock(mu);
      s.syscall = violation;
      if (forced) {
        s.status = forced_status;
        s.message = forced_message;
      }
      if (const std::string a = audit_message_locked(); !a.empty()) s.message += (s.message.empty() ? "" : "; ") + a;
      snap = std::move(s);
      snapshots_served = snapshots_asked;
    }
    snap_cv.notify_all();
  }

  void read_reports() {
    char buf[4096];
    while (true) {
      ssize_t n = ::read(report_r.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      report_buf.append(buf, static_cast<size_t>(n));
    }
    while (report_buf.size() >= sizeof(Report)) {
      Report r;
      std::memcpy(&r, report_buf.data(), sizeof r);
      report_buf.erase(0, sizeof r);
      if (r.magic != Report().magic) {
        if (setup_error.empty()) setup_error = "garbled report from the sandbox child";
        continue;
      }
      r.what[sizeof r.what - 1] = 0;
      if (r.kind == ReportKind::PayloadStatus) {
        have_payload_status = true;
        payload_status = r.value;
      } else if (setup_error.empty()) {
        setup_error = std::string(r.what) + ": " + std::strerror(r.err);
      }
    }
  }

  // Returns false at EOF.
  bool read_output(UniqueFd& fd, bool is_err) {
    char buf[65536];
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) {
      fd.reset();
      return false;
    }
    uint64_t room = output_bytes < limits.max_output_bytes ? limits.max_output_bytes - output_bytes : 0;
    size_t keep = static_cast<size_t>(std::min<uint64_t>(room, static_cast<uint64_t>(n)));
    output_bytes += static_cast<uint64_t>(n);
    if (keep > 0) {
      if (capture) {
        (is_err ? stderr_text : stdout_text).append(buf, keep);
      } else {
        size_t off = 0;
        while (off < keep) {
          ssize_t w = ::write(is_err ? 2 : 1, buf + off, keep - off);
          if (w < 0 && errno == EINTR) continue;
          if (w <= 0) break;
          off += static_cast<size_t>(w);
        }
      }
    }
    if (output_bytes > limits.max_output_bytes)
      force(Status::OL, "output limit of " + std::to_string(limits.max_output_bytes) + " bytes exceeded");
    return true;
  }

  // An open or openat of a run box: through while start-up lasts, afterwards only for the
  // runtime's own files. The path is read from the caller's memory and counts only if the call is
  // still pending after the read.
  void check_open(const seccomp::Notification& n) {
    bool watch;
    {
      std::lock_guard<std::mutex> lock(mu);
      watch = watching_opens;
    }
    if (!watch) return seccomp::let_through(listener.get(), n.id);
    const std::optional<std::string> path = file_opens::read_path(n.tid, n.nr == SYS_open ? n.args[0] : n.args[1]);
    if (!seccomp::still_pending(listener.get(), n.id)) return;
    // "/proc/<n>/...": the caller's own entries when n is its pid in the box.
    const bool numeric_proc = path && path->size() > 6 && path->compare(0, 6, "/proc/") == 0 && std::isdigit((*path)[6]);
    const pid_t own_pid = numeric_proc ? file_opens::pid_in_box(n.tid) : 0;
    if (path && file_opens::runtime_path(*path, open_trees, own_pid)) return seccomp::let_through(listener.get(), n.id);
    seccomp::refuse(listener.get(), n.id, EACCES);
    std::lock_guard<std::mutex> lock(mu);
    if (refused_opens.size() < 64) refused_opens.push_back({n.name, path ? file_opens::printable(*path) : "(unreadable)"});
  }

  // One notification per call: the listener's receive blocks when none is pending, so the loop
  // calls this only when poll() found the listener readable (the monitor must never sit in it).
  void on_listener() {
    seccomp::Notification n;
    if (!seccomp::receive(listener.get(), &n)) return;
    if (seccomp::is_checked_open(n)) return check_open(n);
    if (audit) {
      // The first two arguments help to write the rule (ioctl requests, socket families).
      char args[64];
      std::snprintf(args, sizeof args, "(%#llx,%#llx)", static_cast<unsigned long long>(n.args[0]),
                    static_cast<unsigned long long>(n.args[1]));
      const std::string name = n.name + args;
      seccomp::let_through(listener.get(), n.id);
      if (std::find(audited.begin(), audited.end(), name) == audited.end()) audited.push_back(name);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      if (violation.empty()) violation = n.name;
    }
    force(Status::SV, "syscall " + n.name + " is not allowed in this profile");
  }

  // After the tree is gone: a violation still pending in the listener, if any.
  void drain_listener() {
    pollfd p{listener.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) on_listener();
  }

  void restart_deadline(Clock::time_point from) {
    const auto d = from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits.wall_s));
    deadline_ticks.store(d.time_since_epoch().count());
  }

  void loop() {
    bool init_gone = false;
    while (!init_gone) {
      pollfd p[7];
      int n = 0;
      int i_pid = -1, i_rep = -1, i_out = -1, i_err = -1, i_not = -1, i_lis = -1;
      p[n] = {pidfd.get(), POLLIN, 0};
      i_pid = n++;
      p[n] = {wake.get(), POLLIN, 0};
      const int i_wake = n++;
      if (report_r) {
        p[n] = {report_r.get(), POLLIN, 0};
        i_rep = n++;
      }
      if (out_r) {
        p[n] = {out_r.get(), POLLIN, 0};
        i_out = n++;
      }
      if (err_r) {
        p[n] = {err_r.get(), POLLIN, 0};
        i_err = n++;
      }
      if (notify_r) {
        p[n] = {notify_r.get(), POLLIN, 0};
        i_not = n++;
      }
      if (listener) {
        p[n] = {listener.get(), POLLIN, 0};
        i_lis = n++;
      }

      auto now = Clock::now();
      const Clock::time_point deadline{Clock::duration(deadline_ticks.load())};
      if (now >= deadline) { force(Status::TO, "wall time limit of " + secs(limits.wall_s) + " exceeded"); }
      long ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
      if (cg && cg->cpu_seconds() >= 0) ms = std::min<long>(ms, 100);  // tree CPU is sampled
      if (forced) ms = std::min<long>(ms, 100);
      int rc = ::poll(p, static_cast<nfds_t>(n), static_cast<int>(std::max<long>(ms, 0)));
      if (rc < 0 && errno != EINTR) throw_errno("poll");

      if (i_lis >= 0 && (p[i_lis].revents & POLLIN)) on_listener();
      if (i_lis >= 0 && (p[i_lis].revents & (POLLHUP | POLLERR)) && !(p[i_lis].revents & POLLIN)) listener.reset();
      if (i_not >= 0 && (p[i_not].revents & (POLLIN | POLLHUP))) {
        int fd = fds::recv_fd(notify_r.get());
        if (fd >= 0) {
          listener.reset(fd);
          // The payload is alive and about to exec: remember its host pid (init's only child),
          // which names it in the kernel's log of seccomp kills.
          payload_host_pid = first_child(pid);
        }
        notify_r.reset();  // one listener per box
      }
      if (i_rep >= 0 && (p[i_rep].revents & (POLLIN | POLLHUP))) {
        read_reports();
        if (p[i_rep].revents & POLLHUP && !(p[i_rep].revents & POLLIN)) report_r.reset();
      }
      if (i_out >= 0 && (p[i_out].revents & (POLLIN | POLLHUP))) read_output(out_r, false);
      if (i_err >= 0 && (p[i_err].revents & (POLLIN | POLLHUP))) read_output(err_r, true);
      if (cg) {
        double cpu = cg->cpu_seconds();
        if (cpu > limits.cpu_s) force(Status::TO, "CPU time limit of " + secs(limits.cpu_s) + " exceeded");
      }
      if (p[i_wake].revents & POLLIN) serve_snapshot();
      if (p[i_pid].revents & POLLIN) init_gone = true;
    }
  }

  void reap_and_finish() {
    int status = 0;
    rusage ru{};
    pid_t w;
    do w = ::wait4(pid, &status, __WALL, &ru);
    while (w < 0 && errno == EINTR);
    {
      std::lock_guard<std::mutex> lock(mu);
      reaped = true;
    }
    // Everything in the box is dead now: collect what is left in the pipes.
    if (report_r) read_reports();
    while (out_r && read_output(out_r, false)) {}
    while (err_r && read_output(err_r, true)) {}
    if (listener) drain_listener();

    Record& r = rec;
    r.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
    r.cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    r.max_rss_kb = ru.ru_maxrss;
    bool oom = false;
    if (cg) {
      double c = cg->cpu_seconds();
      if (c > r.cpu_s) r.cpu_s = c;
      oom = cg->oom_killed();
    }
    r.stdout_text = std::move(stdout_text);
    r.stderr_text = std::move(stderr_text);
    r.syscall = violation;

    std::lock_guard<std::mutex> lock(mu);
    r.message = audit_message_locked();
    if (have_payload_status) {
      if (WIFEXITED(payload_status)) r.exit_code = WEXITSTATUS(payload_status);
      if (WIFSIGNALED(payload_status)) r.signal = WTERMSIG(payload_status);
    } else if (WIFSIGNALED(status)) {
      r.signal = WTERMSIG(status);
    }
    auto set = [&](Status s, const std::string& msg) {
      r.status = s;
      if (!msg.empty()) r.message = r.message.empty() ? msg : msg + "; " + r.message;
    };
    if (forced) {
      set(forced_status, forced_message);
    } else if (!setup_error.empty()) {
      set(Status::XX, "sandbox set-up failed: " + setup_error);
    } else if (oom) {
      set(Status::ML, "memory limit of " + std::to_string(limits.memory_mb) + " MB exceeded (OOM kill)");
    } else if (r.cpu_s > limits.cpu_s || (have_payload_status && r.signal == SIGXCPU)) {
      set(Status::TO, "CPU time limit of " + secs(limits.cpu_s) + " exceeded");
    } else if (!have_payload_status) {
      set(Status::XX, "sandbox init ended without a payload status (wait status " + std::to_string(status) + ")");
    } else if (WIFEXITED(payload_status)) {
      if (r.exit_code == 0) set(Status::OK, "");
      else set(Status::RE, "exited with code " + std::to_string(r.exit_code));
    } else if (r.signal == SIGSYS) {
      // A KILL_PROCESS action: a foreign ABI (i386, x32) or the runner's second-stage filter. The
      // kernel logged which syscall (best effort: needs /dev/kmsg).
      if (payload_host_pid > 0) r.syscall = seccomp::killed_syscall_from_kernel_log(payload_host_pid, started_us - 2000000);
      set(Status::SV, "killed by seccomp (SIGSYS): " + (r.syscall.empty()
                                                            ? std::string("foreign syscall ABI or the runner's tightened filter")
                                                            : "syscall " + r.syscall + " (foreign ABI or the runner's tightened filter)"));
    } else if (r.signal == SIGXFSZ) {
      set(Status::OL, "file size limit of " + std::to_string(limits.max_file_mb) + " MB exceeded");
    } else {
      set(Status::SG, std::string("killed by signal ") + std::to_string(r.signal) + " (" + strsignal(r.signal) + ")");
    }
  }

  ~Impl() {
    if (monitor.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!reaped) signal_tree_locked();
      }
      monitor.join();
    }
  }
};

Process::Process(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Process::~Process() = default;
pid_t Process::pid() const { return impl_->pid; }

Record Process::wait() {
  if (impl_->monitor.joinable()) impl_->monitor.join();
  return impl_->rec;
}

Record Process::snapshot() {
  Impl& i = *impl_;
  std::unique_lock<std::mutex> lock(i.mu);
  if (i.monitor_done) return i.rec;
  const uint64_t ticket = ++i.snapshots_asked;
  const uint64_t one = 1;
  if (::write(i.wake.get(), &one, sizeof one) != static_cast<ssize_t>(sizeof one)) throw_errno("snapshot: write to the monitor's eventfd");
  i.snap_cv.wait(lock, [&] { return i.snapshots_served >= ticket || i.monitor_done; });
  return i.snapshots_served >= ticket ? i.snap : i.rec;
}

void Process::kill(const std::string& reason) { impl_->force(Status::SG, "killed by the supervisor: " + reason); }

void Process::restart_clock() { impl_->restart_deadline(Clock::now()); }

void Process::watch_opens() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->watching_opens = true;
}

std::vector<RefusedOpen> Process::take_refused_opens() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return std::exchange(impl_->refused_opens, {});
}

namespace {

void check_spec(const Spec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("kernelgate sandbox: empty argv");
  if (spec.argv[0].empty() || spec.argv[0][0] != '/')
    throw std::runtime_error("kernelgate sandbox: argv[0] must be an absolute path inside the box: " + spec.argv[0]);
  if (spec.limits.wall_s <= 0 || spec.limits.cpu_s <= 0) throw std::runtime_error("kernelgate sandbox: time limits must be > 0");
  for (int fd : spec.pass_fds)
    if (::fcntl(fd, F_GETFD) < 0) throw_errno("pass_fds: fd " + std::to_string(fd));
}

}  // namespace

std::unique_ptr<Process> start(const Spec& spec) {
  check_spec(spec);
  auto impl = std::make_unique<Process::Impl>();
  impl->wake.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!impl->wake) throw_errno("eventfd (the monitor's wake-up)");
  impl->limits = spec.limits;
  impl->capture = spec.capture_output;
  impl->audit = spec.audit_syscalls;
  impl->open_trees = mounts::read_only_trees(spec);

  impl->cg = cgroup::Cgroup::create(spec.limits);
  bool mem_cg = impl->cg && impl->cg->limits_memory();
  bool pids_cg = impl->cg && impl->cg->limits_pids();

  contain::ChildPlan plan;
  plan.mounts = mounts::plan(spec, mounts::staging_dir());
  plan.rlimits = limits::plan(spec, mem_cg, pids_cg, impl->cg && impl->cg->accounts_cpu());
  plan.bpf = &seccomp::profile_bpf(spec.profile);
  plan.argv_store = spec.argv;
  plan.env_store = spec.env;
  for (auto& a : plan.argv_store) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  for (auto& e : plan.env_store) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  plan.pass_fds = spec.pass_fds;

  // The clone happens on the monitor thread, which lives exactly as long as the box is watched:
  // PR_SET_PDEATHSIG fires when the *thread* that cloned exits, so cloning from the caller's
  // thread would kill the box when, say, a worker thread that started it finishes.
  auto launch = std::make_shared<Launch>();
  launch->plan = std::move(plan);
  launch->user_ns = namespaces::need_user_ns();
  std::promise<void> started;
  std::future<void> ready = started.get_future();
  Process::Impl* raw = impl.get();
  impl->monitor = std::thread([raw, launch, &started] {
    try {
      raw->launch(*launch);
    } catch (...) {
      started.set_exception(std::current_exception());
      raw->abandon();
      return;
    }
    started.set_value();
    raw->monitor_main();
  });
  ready.get();  // rethrows what failed in launch(); ~Impl then joins the thread
  return std::unique_ptr<Process>(new Process(std::move(impl)));
}

Record run(const Spec& spec) { return start(spec)->wait(); }

}  // namespace kg::sandbox

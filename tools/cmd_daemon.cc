// `kernelgate daemon`: a process that has paid libtorch's start-up once and keeps one worker
// forked from it ready, with its runners started and its device set up, waiting on the socket.
// `kernelgate eval` with KERNELGATE_DAEMON set hands its command line, working directory,
// environment and standard streams to that worker, which runs the command as the process would
// have (same code, same files, same exit status) and then exits; the daemon forks the next one.
//
// Isolation is as for separate processes: every request gets a worker of its own, forked from a
// parent that never evaluated anything (and never touched a GPU: CUDA does not survive a fork),
// and every runner is still new and used for one op only.
#include "daemon_protocol.h"
#include "eval_cli.h"
#include "warm_pool.h"

#include "kernelgate/names.h"
#include "kernelgate/remove_tree.h"
#include "kernelgate/runner_pool.h"
#include "kernelgate/text_safety.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

int kg_cmd_eval(int argc, char** argv);
extern char** environ;

namespace {

const char* kUsage =
    "usage: kernelgate daemon --socket PATH [--device cpu|cuda|auto] [--policy NAME|FILE] [--overlap]\n"
    "\n"
    "Keeps a worker ready for `kernelgate eval`: libtorch started, two runners started ahead, the\n"
    "device set up. An eval run with KERNELGATE_DAEMON=PATH in its environment is handed to that\n"
    "worker (its command line, folder, environment and terminal) and ends with the exit status it\n"
    "would have had; a fresh worker is forked for the next once that one has ended, its runners\n"
    "too, so that nothing else of the daemon shares the device with a request (its timings).\n"
    "Requests are served one at a time; callers queue. The runners are those of an eval with\n"
    "the same --device and --policy (default cpu and competition, as eval's); an eval with other\n"
    "limits or another device starts its own, as it would without the daemon. An eval whose\n"
    "environment differs from the daemon's in a variable that shaped the worker (KERNELGATE_*,\n"
    "CUDA_*, TORCH_*, OMP_*, LD_*, PATH, HOME, ...) is declined and runs in its own process, as is\n"
    "one whose caller is another user. Runs in the foreground, logging a line per request on\n"
    "stderr, until SIGTERM or SIGINT (requests under way finish).\n"
    "  --socket PATH   the Unix socket to listen on (mode 0600; PATH.work holds the workers' runners)\n"
    "  --device D      the device the ready worker sets up (default cpu)\n"
    "  --policy P      the policy whose limits its runners have (default competition)\n"
    "  --overlap       fork the next worker as soon as one takes a request: callers are served\n"
    "                  side by side and back-to-back calls wait less, but a worker's set-up and\n"
    "                  other requests then share the device with a request's timed calls\n"
    "Example:\n"
    "  kernelgate daemon --socket /tmp/kg.sock &\n"
    "  KERNELGATE_DAEMON=/tmp/kg.sock kernelgate eval examples/correct --ops relu.default\n"
    "Exit status: 0 after SIGTERM or SIGINT, 2 bad usage, a socket it cannot listen on, or three\n"
    "workers in a row that could not get ready (a --device cuda without a usable GPU).\n";

volatile sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }
volatile sig_atomic_t g_worker_stop = 0;  // a worker still waiting: shut its runners down and go
void on_worker_stop(int) { g_worker_stop = 1; }

struct DaemonOptions {
  std::string socket_path, device = "cpu", policy = kg::policy::kDefaultProfile;
  // The next worker gets ready while a request runs (else once the worker in flight has ended).
  bool overlap = false;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void log_line(int fd, const std::string& text) {
  std::string line = "kernelgate daemon: " + kg::text::terminal_safe(text) + "\n";
  ssize_t ignored = ::write(fd, line.data(), line.size());
  (void)ignored;
}

int threads_of_this_process() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  return -1;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (size_t i = 1; i < argv.size(); ++i) s += (i > 1 ? " " : "") + argv[i];
  return s;
}

// --- the worker: everything below runs in a forked child --------------------------------------

// The slot take_warm_runner_pool() hands out once.
std::mutex g_warm_mu;
std::shared_ptr<kg::loader::RunnerPool> g_warm_pool;
kg::names::Device g_warm_device = kg::names::Device::Cpu;
bool g_warm_taken = false;

// A worker's every way out once its pool exists: the pool's runners shut down and their folders
// removed first.
[[noreturn]] void leave_worker(std::shared_ptr<kg::loader::RunnerPool>& pool, int status) {
  kg::cli::offer_warm_runner_pool(nullptr, kg::names::Device::Cpu);
  pool.reset();
  ::_exit(status);
}

// The caller's stdin, stdout and stderr given back before the reply: a caller that reads its
// streams to their end (pipes) is done when the eval is, not once this worker has ended its
// runners (a CUDA context's teardown each) and left.
void release_caller_streams() {
  kg::UniqueFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  for (int i = 0; i < 3; ++i)
    if (!null || ::dup2(null.get(), i) < 0) ::close(i);
}

[[noreturn]] void worker(const DaemonOptions& o, int listen_fd, kg::UniqueFd ready_pipe, const std::filesystem::path& work) {
  const auto born = std::chrono::steady_clock::now();
  const int log_fd = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker still waiting dies with the daemon
  if (::getppid() == 1) ::_exit(0);
  ::setpgid(0, 0);  // the daemon's terminal's ^C stops the daemon, not the requests under way
  struct sigaction sa {};
  sa.sa_handler = on_worker_stop;  // the daemon stopping: see the loop below
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGINT, SIG_DFL);
  const std::string where = "worker " + std::to_string(::getpid());
  std::filesystem::path staging = work / ("w" + std::to_string(::getpid()));
  std::shared_ptr<kg::loader::RunnerPool> pool;
  try {
    const auto device = kg::cli::device_option(o.device);
    if (!device) throw std::runtime_error("--device must be cpu, cuda or auto");
    kg::harness::EvalOptions eval;
    eval.device = *device;
    const kg::policy::Policy policy = kg::policy::load(o.policy);
    // Two runners: the op's and eager's for one timed op, the commonest request.
    pool = kg::harness::make_runner_pool(eval, policy, (staging / "runners").string(), 2, 2);
    kg::harness::prepare_process(*device);
    kg::cli::offer_warm_runner_pool(pool, *device);
  } catch (const std::exception& e) {
    log_line(log_fd, where + ": cannot get ready: " + e.what());
    ::_exit(3);
  }
  // The runners are still starting on the pool's threads; this is the worker's own set-up.
  log_line(log_fd, where + ": ready in " + std::to_string(seconds_since(born)) + " s");
  kg::UniqueFd conn;
  for (;;) {
    pollfd waiting{listen_fd, POLLIN, 0};
    if (g_worker_stop) leave_worker(pool, 0);
    if (::poll(&waiting, 1, 200) <= 0) continue;
    conn.reset(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN) continue;
      log_line(log_fd, where + ": accept: " + std::strerror(errno));
      ::_exit(3);
    }
    ucred peer{};
    socklen_t len = sizeof peer;
    if (::getsockopt(conn.get(), SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.uid == ::geteuid()) break;
    log_line(log_fd, where + ": refused a connection from uid " + std::to_string(peer.uid) + " (only uid " + std::to_string(::geteuid()) +
                         " is served)");
    conn.reset();
  }
  const auto t0 = std::chrono::steady_clock::now();
  // Taken: this worker no longer dies with the daemon (its caller waits). The daemon forks the next
  // worker now with --overlap, else once this one has ended (the pipe's end, at its exit).
  ssize_t ignored = ::write(ready_pipe.get(), "T", 1);
  (void)ignored;
  if (o.overlap) ready_pipe.reset();
  ::close(listen_fd);
  ::prctl(PR_SET_PDEATHSIG, 0);
  ::signal(SIGTERM, SIG_DFL);  // from here on as the caller's own process would be

  std::vector<kg::UniqueFd> fds;
  kg::daemon::Request req;
  auto decline = [&](const std::string& why) {
    log_line(log_fd, where + ": declined: " + why);
    try {
      kg::daemon::send_reply(conn.get(), kg::daemon::Reply{false, 0, why});
    } catch (const std::exception&) {}
    conn.reset();
    leave_worker(pool, 0);
  };
  // The launcher sends its request at once; a connection that sends nothing does not hold a
  // worker and its runners for ever.
  const timeval request_limit{10, 0};
  ::setsockopt(conn.get(), SOL_SOCKET, SO_RCVTIMEO, &request_limit, sizeof request_limit);
  try {
    req = kg::daemon::receive_request(conn.get(), &fds);
  } catch (const std::exception& e) { decline(e.what()); }
  const timeval no_limit{0, 0};
  ::setsockopt(conn.get(), SOL_SOCKET, SO_RCVTIMEO, &no_limit, sizeof no_limit);
  std::vector<std::string> own_env;
  for (char** e = environ; *e; ++e) own_env.emplace_back(*e);
  if (fds.size() != 3) decline("the request did not carry stdin, stdout and stderr");
  if (req.argv.size() < 2 || req.argv[1] != "eval") decline("only `kernelgate eval` is run by the daemon");
  if (auto name = kg::daemon::first_difference(req.env, own_env); !name.empty()) decline(name + " differs from the daemon's environment");
  if (::chdir(req.cwd.c_str()) != 0) decline(req.cwd + ": " + std::strerror(errno));
  log_line(log_fd, where + ": eval for uid " + std::to_string(::geteuid()) + " in " + req.cwd + ": " + command_line(req.argv));

  // The caller's environment, streams and arguments, as its own process would have had them.
  static std::vector<std::string> env_storage;
  env_storage = req.env;
  ::clearenv();
  for (auto& kv : env_storage) ::putenv(kv.data());
  std::fflush(stdout);
  std::fflush(stderr);
  for (int i = 0; i < 3; ++i) ::dup2(fds[i].get(), i);
  fds.clear();
  std::vector<char*> argv;
  for (auto& a : req.argv) argv.push_back(a.data());
  argv.push_back(nullptr);

  // The caller gone (its terminal's ^C, a kill): this worker goes too, as the process would have.
  static std::atomic<bool> replied{false};
  const int watched = conn.get();
  std::thread([watched] {
    pollfd p{watched, POLLRDHUP, 0};
    while (::poll(&p, 1, -1) < 0 && errno == EINTR) {}
    if (!replied.load()) ::_exit(130);
  }).detach();

  int status = 2;
  try {
    status = kg_cmd_eval(static_cast<int>(req.argv.size()) - 1, argv.data() + 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelgate eval: internal error: %s\n", kg::text::terminal_safe(e.what()).c_str());
  }
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  release_caller_streams();
  replied = true;
  bool warm;
  {
    std::lock_guard<std::mutex> lock(g_warm_mu);
    warm = g_warm_taken;
  }
  try {
    kg::daemon::send_reply(conn.get(), kg::daemon::Reply{true, status, ""});
  } catch (const std::exception&) {}
  conn.reset();
  log_line(log_fd,
           where + ": exit " + std::to_string(status) + " after " + std::to_string(seconds_since(t0)) + " s" +
               (warm ? " (runners started ahead)" : " (not the runners started ahead: its device, limits or --no-runner-pool differ)"));
  leave_worker(pool, status);
}

// --- the daemon -------------------------------------------------------------------------------

kg::UniqueFd listen_on(const std::string& path) {
  sockaddr_un addr{};
  std::string why;
  if (!kg::daemon::unix_address(path, &addr, &why)) throw std::runtime_error(why);
  if (kg::daemon::connect_to(path, &why)) throw std::runtime_error(path + ": a daemon is already listening there");
  std::error_code ec;
  if (std::filesystem::is_socket(path, ec)) std::filesystem::remove(path, ec);  // a stale one
  kg::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  const mode_t old = ::umask(0177);
  const int rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::umask(old);
  if (rc != 0) throw std::runtime_error(path + ": cannot listen: " + std::strerror(errno));
  if (::listen(fd.get(), 64) != 0) throw std::runtime_error(path + ": listen: " + std::strerror(errno));
  return fd;
}

int run_daemon(const DaemonOptions& o) {
  const int threads = threads_of_this_process();
  if (threads != 1) {
    std::fprintf(stderr, "kernelgate daemon: %d threads before the first fork; a worker forked now could inherit a held lock\n", threads);
    return 2;
  }
  kg::UniqueFd listener;
  const std::filesystem::path work = o.socket_path + ".work";
  try {
    kg::policy::load(o.policy);  // a bad policy is a usage error now, not a worker failing forever
    // Not device_option(): resolving auto asks CUDA, and a daemon that touched it could not fork.
    if (o.device != "auto" && !kg::names::try_parse_device(o.device)) throw std::runtime_error("--device must be cpu, cuda or auto");
    listener = listen_on(o.socket_path);
    std::error_code ec;
    std::filesystem::create_directories(work, ec);
    if (ec) throw std::runtime_error(work.string() + ": cannot create: " + ec.message());
    ::chmod(work.c_str(), 0700);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelgate daemon: %s\n", kg::text::terminal_safe(e.what()).c_str());
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = on_stop;  // no SA_RESTART: poll returns at once
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  log_line(STDERR_FILENO, "listening on " + o.socket_path + " (device " + o.device + ", policy " + o.policy + ")");

  pid_t ready = 0;
  kg::UniqueFd ready_pipe, busy_pipe;
  std::set<pid_t> workers;
  int failed_in_a_row = 0;  // workers that ended before a request, since the last one took one
  constexpr int kGiveUpAfter = 3;
  auto next_fork = std::chrono::steady_clock::now();
  auto reap = [&](int flags) {
    int st;
    pid_t pid;
    while ((pid = ::waitpid(-1, &st, flags)) > 0) {
      workers.erase(pid);
      if (pid == ready) {
        ready = 0;
        ready_pipe.reset();
        if (!g_stop) {  // it died before it took a request (at a stop it was told to go)
          log_line(STDERR_FILENO, "worker " + std::to_string(pid) + " ended before a request" +
                                      (WIFSIGNALED(st) ? " (signal " + std::to_string(WTERMSIG(st)) + ")" : ""));
          next_fork = std::chrono::steady_clock::now() + std::chrono::seconds(1);
          ++failed_in_a_row;
        }
      } else if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) {
        log_line(STDERR_FILENO, "worker " + std::to_string(pid) + " ended by signal " + std::to_string(WTERMSIG(st)));
      }
      std::error_code ignored;
      kg::loader::remove_tree((work / ("w" + std::to_string(pid))).string(), ignored);
    }
  };
  while (!g_stop && failed_in_a_row < kGiveUpAfter) {
    if (!ready && !busy_pipe && std::chrono::steady_clock::now() >= next_fork) {
      int p[2];
      if (::pipe2(p, O_CLOEXEC) != 0) {
        log_line(STDERR_FILENO, std::string("pipe: ") + std::strerror(errno));
        return 2;
      }
      kg::UniqueFd read_end(p[0]), write_end(p[1]);
      pid_t pid = ::fork();
      if (pid == 0) {
        read_end.reset();
        worker(o, listener.get(), std::move(write_end), work);
      }
      if (pid < 0) {
        log_line(STDERR_FILENO, std::string("fork: ") + std::strerror(errno));
        next_fork = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      } else {
        ready = pid;
        ready_pipe = std::move(read_end);
        workers.insert(pid);
      }
    }
    pollfd p[2] = {{ready_pipe ? ready_pipe.get() : -1, POLLIN, 0}, {busy_pipe ? busy_pipe.get() : -1, POLLIN, 0}};
    if (::poll(p, 2, 200) > 0) {
      char c;
      if (p[0].revents && ::read(ready_pipe.get(), &c, 1) == 1) {
        ready = 0;  // taken: the next one is forked at once with --overlap, else once it has ended
        if (!o.overlap) busy_pipe = std::move(ready_pipe);
        ready_pipe.reset();
        failed_in_a_row = 0;
      } else if (p[1].revents && ::read(busy_pipe.get(), &c, 1) <= 0) {
        busy_pipe.reset();  // the worker in flight has ended: its runners too
      }
    }
    reap(WNOHANG);
  }
  const bool gave_up = failed_in_a_row >= kGiveUpAfter;
  if (gave_up)
    log_line(STDERR_FILENO, std::to_string(kGiveUpAfter) + " workers in a row could not get ready (the reason is above); stopping");
  log_line(STDERR_FILENO, "stopping: " + std::to_string(workers.size() - (ready ? 1 : 0)) + " request(s) under way finish first");
  if (ready) ::kill(ready, SIGTERM);  // it shuts its runners down and exits
  listener.reset();
  std::error_code ec;
  std::filesystem::remove(o.socket_path, ec);
  g_stop = 1;
  while (!workers.empty()) {
    reap(0);
    if (errno == ECHILD) break;
  }
  kg::loader::remove_tree(work.string(), ec);
  return gave_up ? 2 : 0;
}

}  // namespace

namespace kg::cli {

void offer_warm_runner_pool(std::shared_ptr<loader::RunnerPool> pool, names::Device device) {
  std::lock_guard<std::mutex> lock(g_warm_mu);
  g_warm_pool = std::move(pool);
  g_warm_device = device;
}

std::shared_ptr<loader::RunnerPool> take_warm_runner_pool(const harness::EvalOptions& options, const policy::Policy& policy) {
  std::lock_guard<std::mutex> lock(g_warm_mu);
  if (!g_warm_pool || options.device != g_warm_device || !harness::runner_pool_serves(*g_warm_pool, options, policy)) return nullptr;
  g_warm_taken = true;
  return std::move(g_warm_pool);
}

}  // namespace kg::cli

int kg_cmd_daemon(int argc, char** argv) {
  DaemonOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--overlap") {
      o.overlap = true;
      continue;
    }
    if ((a == "--socket" && value(&o.socket_path)) || (a == "--device" && value(&o.device)) || (a == "--policy" && value(&o.policy)))
      continue;
    std::fprintf(stderr, "kernelgate daemon: %s '%s'\n\n%s",
                 a.rfind("--", 0) == 0 ? "missing value or unknown option" : "unexpected argument", kg::text::terminal_safe(a).c_str(),
                 kUsage);
    return 2;
  }
  if (o.socket_path.empty()) {
    std::fprintf(stderr, "kernelgate daemon: --socket PATH is required\n\n%s", kUsage);
    return 2;
  }
  return run_daemon(o);
}

// `kernelgate daemon` and `kernelgate eval` with KERNELGATE_DAEMON: the same verdicts, files and
// exit status as an eval in its own process; the runners started ahead used when the options
// match; another environment, a missing daemon and a malformed request each handled; a caller
// killed takes its worker with it; SIGTERM stops the daemon and removes its socket.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "../../tools/daemon_protocol.h"
#include "e2e_util.h"

namespace fs = std::filesystem;
using namespace kg::e2e;

namespace {

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << "missing \"" << (part) << "\" in:\n" << (text)

// A daemon on a socket of its own, logging into `log`; stopped with SIGTERM when destroyed.
class Daemon {
 public:
  Daemon(const fs::path& dir, const std::string& args) : socket_((dir / "kg.sock").string()), log_(dir / "daemon.log") {
    pid_ = ::fork();
    if (pid_ == 0) {
      FILE* f = std::freopen(log_.c_str(), "w", stderr);
      (void)f;
      std::string line = std::string("exec ") + KG_BINARY + " daemon --socket " + socket_ + " " + args;
      ::execl("/bin/sh", "sh", "-c", line.c_str(), nullptr);
      ::_exit(127);
    }
    for (int i = 0; i < 600 && !ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ~Daemon() { stop(); }
  bool ready() const {
    std::string why;
    return static_cast<bool>(kg::daemon::connect_to(socket_, &why)) || false;
  }
  int stop() {
    if (pid_ <= 0) return status_;
    ::kill(pid_, SIGTERM);
    int st = 0;
    for (int i = 0; i < 600; ++i) {
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = 0;
        return status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &st, 0);
    pid_ = 0;
    return status_ = -1;
  }
  std::string env() const { return "env KERNELGATE_DAEMON=" + socket_ + " "; }
  std::string log() const { return read(log_); }
  // The log once it holds `part` (at most 10 s): a worker writes its "exit N after" line after its
  // reply, so a caller can be back before it.
  std::string log_with(const std::string& part) const {
    std::string text;
    for (int i = 0; i < 200 && (text = log()).find(part) == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return text;
  }
  const std::string& socket() const { return socket_; }

 private:
  std::string socket_;
  fs::path log_;
  pid_t pid_ = -1;
  int status_ = -1;
};

// Each op's verdict, failure categories and sample counts, the part of results.json that two runs
// with the same seed must agree on.
std::string verdicts(const fs::path& out) {
  nlohmann::json r = load_results(out);
  std::string s;
  for (const auto& o : r["ops"]) {
    s += o["op"].get<std::string>() + " " + o["verdict"].get<std::string>() + " " + o["tests"].dump();
    for (const auto& f : o["failures"]) s += " " + f.value("category", "");
    s += "\n";
  }
  return s;
}

// The example's relu, untimed, through `daemon`, into `out`.
CommandResult relu_through(const Daemon& daemon, const fs::path& out) {
  return run_shell(daemon.env() + KG_BINARY " eval " KG_SOURCE_DIR "/examples/correct --ops relu.default --no-timing --out " + out.string(),
                   600);
}

// Running, not a zombie: a killed child of a dead worker waits for whoever reaps orphans here.
bool process_exists(pid_t pid) {
  const std::string stat = read("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z' && stat[paren + 2] != 'X';
}

}  // namespace

TEST(Daemon, EvalThroughTheDaemonHasTheVerdictsFilesAndStatusOfItsOwnProcess) {
  fs::path d = temp_dir("daemon-same");
  Daemon daemon(d, "");
  ASSERT_TRUE(daemon.ready()) << daemon.log();
  for (const char* example : {"correct", "buggy"}) {
    const std::string args = std::string(" eval " KG_SOURCE_DIR "/examples/") + example + " --no-timing --seed 7 --out ";
    CommandResult own = run(args + (d / example / "own").string(), 600);
    CommandResult via = run_shell(daemon.env() + KG_BINARY + args + (d / example / "via").string(), 600);
    EXPECT_EQ(own.status, std::string(example) == "correct" ? 0 : 1) << own.output;
    EXPECT_EQ(via.status, own.status) << via.output;
    EXPECT_EQ(verdicts(d / example / "via"), verdicts(d / example / "own"));
    for (const char* file : {"summary.csv", "summary.md", "report.html"}) EXPECT_TRUE(fs::exists(d / example / "via" / file)) << file;
    EXPECT_CONTAINS(via.output, "results: " + (d / example / "via" / "results.json").string());
    EXPECT_EQ(via.output.find("declined"), std::string::npos) << via.output;
  }
  // A usage error is the worker's too: its message on the caller's stderr, exit status 2.
  CommandResult bad = run_shell(daemon.env() + KG_BINARY " eval --no-such-option", 60);
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_CONTAINS(bad.output, "usage: kernelgate eval");
  const std::string log = daemon.log_with("exit 1 after");
  EXPECT_CONTAINS(log, "examples/correct --no-timing --seed 7");
  EXPECT_CONTAINS(log, "exit 1 after");
  EXPECT_CONTAINS(log, "(runners started ahead)");
  daemon.stop();  // its workers write under d until it has stopped
  fs::remove_all(d);
}

TEST(Daemon, TimedEvalTakesTheRunnersStartedAheadOnlyWhenItsLimitsMatch) {
  fs::path d = temp_dir("daemon-pool");
  Daemon daemon(d, "--policy rl-reward");
  ASSERT_TRUE(daemon.ready()) << daemon.log();
  const std::string args = " eval " KG_SOURCE_DIR "/examples/correct --ops relu.default --suite smoke --seed 3 --out ";
  CommandResult same = run_shell(daemon.env() + KG_BINARY + args + (d / "same").string() + " --policy rl-reward", 600);
  EXPECT_EQ(same.status, 0) << same.output;
  nlohmann::json r = load_results(d / "same");
  ASSERT_EQ(r["ops"].size(), 1u);
  EXPECT_EQ(r["ops"][0]["verdict"], "pass");
  EXPECT_FALSE(r["ops"][0]["timing"].empty()) << r["ops"][0].dump();
  EXPECT_CONTAINS(daemon.log_with("exit 0 after"), "exit 0 after");
  EXPECT_CONTAINS(daemon.log(), "(runners started ahead)");
  EXPECT_EQ(daemon.log().find("not the runners started ahead"), std::string::npos) << daemon.log();
  // The competition policy's limits are not rl-reward's: the worker starts runners of its own.
  CommandResult other = run_shell(daemon.env() + KG_BINARY + args + (d / "other").string() + " --policy competition", 600);
  EXPECT_EQ(other.status, 0) << other.output;
  EXPECT_EQ(load_results(d / "other")["ops"][0]["verdict"], "pass");
  EXPECT_CONTAINS(daemon.log_with("(not the runners started ahead"),
                  "(not the runners started ahead: its device, limits or --no-runner-pool differ)");
  daemon.stop();  // its workers write under d until it has stopped
  fs::remove_all(d);
}

TEST(Daemon, AnotherEnvironmentOrNoDaemonRunsTheEvalInItsOwnProcess) {
  fs::path d = temp_dir("daemon-declined");
  Daemon daemon(d, "");
  ASSERT_TRUE(daemon.ready()) << daemon.log();
  const std::string args = " eval " KG_SOURCE_DIR "/examples/correct --ops relu.default --no-timing --out ";
  CommandResult other_env = run_shell(daemon.env() + "OMP_NUM_THREADS=1 " KG_BINARY + args + (d / "env").string(), 600);
  EXPECT_EQ(other_env.status, 0) << other_env.output;
  EXPECT_CONTAINS(other_env.output,
                  "kernelgate: the daemon declined: OMP_NUM_THREADS differs from the daemon's environment; evaluating in this process");
  EXPECT_EQ(load_results(d / "env")["ops"][0]["verdict"], "pass");
  EXPECT_CONTAINS(daemon.log(), "declined: OMP_NUM_THREADS differs");

  CommandResult none =
      run_shell("env KERNELGATE_DAEMON=" + (d / "nobody.sock").string() + " " KG_BINARY + args + (d / "none").string(), 600);
  EXPECT_EQ(none.status, 0) << none.output;
  EXPECT_CONTAINS(none.output, "kernelgate: no daemon at " + (d / "nobody.sock").string());
  EXPECT_EQ(load_results(d / "none")["ops"][0]["verdict"], "pass");
  // Only eval goes to the daemon: every other command runs in the caller's process.
  CommandResult version = run_shell(daemon.env() + KG_BINARY " version", 60);
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.output.rfind("kernelgate ", 0), 0u) << version.output;
  daemon.stop();  // its workers write under d until it has stopped
  fs::remove_all(d);
}

TEST(Daemon, MalformedRequestsAreDeclinedAndTheDaemonServesOn) {
  fs::path d = temp_dir("daemon-malformed");
  Daemon daemon(d, "");
  ASSERT_TRUE(daemon.ready()) << daemon.log();
  auto raw = [&](const std::string& bytes) {
    std::string why;
    kg::UniqueFd fd = kg::daemon::connect_to(daemon.socket(), &why);
    EXPECT_TRUE(fd) << why;
    if (!bytes.empty()) { EXPECT_EQ(::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size())); }
    ::shutdown(fd.get(), SHUT_WR);
    auto reply = kg::daemon::receive_reply(fd.get());
    return reply ? reply->declined : std::string("(no reply)");
  };
  EXPECT_CONTAINS(raw(""), "daemon request: no length word");
  {  // connected, and silent: the worker gives up after 10 s instead of waiting for ever
    std::string why;
    kg::UniqueFd silent = kg::daemon::connect_to(daemon.socket(), &why);
    ASSERT_TRUE(silent) << why;
    auto reply = kg::daemon::receive_reply(silent.get());
    ASSERT_TRUE(reply);
    EXPECT_CONTAINS(reply->declined, "nothing came within the time allowed");
  }
  EXPECT_CONTAINS(raw(std::string("\xff\xff\xff\x7f", 4)), "over the 4 MiB limit");
  EXPECT_CONTAINS(raw(std::string("\x08\0\0\0garbage!", 12)), "daemon request: truncated");
  // A well-formed request without the caller's streams, and one for another command.
  std::string why;
  kg::UniqueFd fd = kg::daemon::connect_to(daemon.socket(), &why);
  ASSERT_TRUE(fd) << why;
  kg::daemon::send_request(fd.get(), kg::daemon::Request{"/", {"kernelgate", "eval", "x"}, {}}, {});
  auto reply = kg::daemon::receive_reply(fd.get());
  ASSERT_TRUE(reply);
  EXPECT_CONTAINS(reply->declined, "did not carry stdin, stdout and stderr");
  CommandResult ok = relu_through(daemon, d / "ok");
  EXPECT_EQ(ok.status, 0) << ok.output << daemon.log();
  EXPECT_EQ(load_results(d / "ok")["ops"][0]["verdict"], "pass");
  daemon.stop();  // its workers write under d until it has stopped
  fs::remove_all(d);
}

// What another user gets: no way in through the socket's mode, and, with the mode opened, a
// connection closed unanswered by a worker that checks the peer's uid.
TEST(Daemon, AnotherUserIsRefusedByTheSocketsModeAndByTheWorker) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  fs::path d = temp_dir("daemon-uid");
  fs::permissions(d, fs::perms::all);  // another user may reach the socket's folder
  Daemon daemon(d, "");
  ASSERT_TRUE(daemon.ready()) << daemon.log();
  EXPECT_EQ(fs::status(daemon.socket()).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  auto as_nobody = [&]() {
    pid_t child = ::fork();
    if (child == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(10);
      std::string why;
      kg::UniqueFd fd = kg::daemon::connect_to(daemon.socket(), &why);
      if (!fd) ::_exit(why.find("Permission denied") != std::string::npos ? 20 : 21);
      const timeval limit{60, 0};  // a worker that neither answers nor closes fails the test, not hangs it
      ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
      try {
        kg::daemon::send_request(fd.get(), kg::daemon::Request{"/", {"kernelgate", "eval", "/"}, {}}, {0, 1, 2});
      } catch (const std::exception&) { ::_exit(30); }
      ::_exit(kg::daemon::receive_reply(fd.get()) ? 31 : 32);
    }
    int st = 0;
    ::waitpid(child, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  };
  EXPECT_EQ(as_nobody(), 20) << "20: the socket's mode kept another user out";
  fs::permissions(daemon.socket(), fs::perms::all);
  const int opened = as_nobody();
  EXPECT_TRUE(opened == 32 || opened == 30) << opened << ": 32 or 30: the worker closed the connection unanswered";
  EXPECT_CONTAINS(daemon.log(), "refused a connection from uid 65534");
  CommandResult ok = relu_through(daemon, d / "ok");
  EXPECT_EQ(ok.status, 0) << ok.output;
  daemon.stop();  // its workers write under d until it has stopped
  fs::remove_all(d);
}

TEST(Daemon, ACallerKilledTakesItsWorkerAndRunnersWithIt) {
  fs::path d = temp_dir("daemon-killed");
  Daemon daemon(d, "");
  ASSERT_TRUE(daemon.ready()) << daemon.log();
  // Every op of the example with timing: many seconds, so the kill lands while it runs.
  pid_t caller = ::fork();
  if (caller == 0) {
    ::setenv("KERNELGATE_DAEMON", daemon.socket().c_str(), 1);
    FILE* f = std::freopen("/dev/null", "w", stdout);
    (void)f;
    ::execl(KG_BINARY, "kernelgate", "eval", KG_SOURCE_DIR "/examples/correct", "--out", (d / "out").c_str(), nullptr);
    ::_exit(127);
  }
  std::smatch m;
  std::string log;
  const std::regex started("worker ([0-9]+): eval for uid");
  for (int i = 0; i < 600 && !std::regex_search(log = daemon.log(), m, started); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(std::regex_search(log, m, started)) << log;
  const pid_t worker = std::stoi(m[1]);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_TRUE(process_exists(worker));
  const std::string runners = run_shell("pgrep -P " + std::to_string(worker)).output;
  ::kill(caller, SIGKILL);
  int st;
  ::waitpid(caller, &st, 0);
  bool gone = false;
  for (int i = 0; i < 200 && !(gone = !process_exists(worker)); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(gone) << "worker " << worker << " outlived its caller";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::istringstream children(runners);
  for (std::string pid; std::getline(children, pid);) {
    if (!pid.empty()) { EXPECT_FALSE(process_exists(std::stoi(pid))) << "the worker's child " << pid << " outlived it"; }
  }
  EXPECT_FALSE(fs::exists(d / "out" / "results.json"));
  // The daemon serves the next caller.
  CommandResult ok = relu_through(daemon, d / "ok");
  EXPECT_EQ(ok.status, 0) << ok.output;
  daemon.stop();  // its workers write under d until it has stopped
  fs::remove_all(d);
}

// A caller that reads its output through a pipe to the end (an RL trainer's capture_output) is done
// when its eval is: the worker gives the caller's streams back before it replies, so the pipe is at
// its end once the launcher has exited, while the worker may still be ending its runners. Without
// that, the pipe stays open until the worker has left (its runners' ends, tens of milliseconds).
TEST(Daemon, ACallersPipeEndsWithTheReplyNotWithTheWorker) {
  fs::path d = temp_dir("daemon-pipe");
  Daemon daemon(d, "--policy rl-reward");
  ASSERT_TRUE(daemon.ready()) << daemon.log();
  for (int round = 0; round < 3; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const fs::path out = d / ("out" + std::to_string(round));
    pid_t caller = ::fork();
    if (caller == 0) {
      ::setenv("KERNELGATE_DAEMON", daemon.socket().c_str(), 1);
      ::dup2(fds[1], STDOUT_FILENO);
      ::dup2(fds[1], STDERR_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execl(KG_BINARY, "kernelgate", "eval", KG_SOURCE_DIR "/examples/correct", "--ops", "relu.default", "--no-timing", "--policy",
              "rl-reward", "--out", out.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string text;
    int st = 0;
    ::waitpid(caller, &st, 0);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
    // The launcher has its reply and is gone: what the pipe holds is all there is, then its end.
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
    const int err = errno;
    ::close(fds[0]);
    EXPECT_EQ(n, 0) << "the pipe was still open once the launcher had exited (" << std::strerror(err) << "): the worker held it";
    EXPECT_CONTAINS(text, "results: " + (out / "results.json").string());
    EXPECT_EQ(text.find("declined"), std::string::npos) << text;
    std::this_thread::sleep_for(std::chrono::seconds(2));  // the next worker's runners
  }
  daemon.stop();  // its workers write under d until it has stopped
  fs::remove_all(d);
}

// One request at a time: the next worker is forked once the worker in flight has ended (its
// runners too), so no set-up and no other request shares the device with a request's timed
// calls. With --overlap it is forked at the take, and a second caller is served while the first
// one's timing runs.
TEST(Daemon, RequestsAreServedOneAtATimeUnlessOverlapIsAsked) {
  for (const std::string mode : {"", "--overlap"}) {
    SCOPED_TRACE("daemon " + mode);
    fs::path d = temp_dir("daemon-one-at-a-time");
    Daemon daemon(d, mode);
    ASSERT_TRUE(daemon.ready()) << daemon.log();
    // The first caller times (competition's CPU timing: seconds); the second comes while it runs.
    CommandResult timed;
    std::thread first([&] {
      timed = run_shell(daemon.env() + KG_BINARY " eval " KG_SOURCE_DIR "/examples/correct --ops relu.default --suite smoke --out " +
                            (d / "timed").string(),
                        600);
    });
    daemon.log_with(": eval for uid");
    CommandResult second = relu_through(daemon, d / "second");
    first.join();
    EXPECT_EQ(timed.status, 0) << timed.output;
    EXPECT_EQ(second.status, 0) << second.output;
    EXPECT_FALSE(load_results(d / "timed")["ops"][0]["timing"].empty());
    const std::string log = daemon.log_with("exit 0 after");
    const size_t first_eval = log.find(": eval for uid");
    const size_t second_eval = log.find(": eval for uid", first_eval + 1);
    const size_t first_exit = log.find("exit 0 after");
    ASSERT_NE(second_eval, std::string::npos) << log;
    ASSERT_NE(first_exit, std::string::npos) << log;
    EXPECT_NE(log.find("--ops relu.default --suite smoke", first_eval), std::string::npos) << log;
    if (mode.empty()) {
      EXPECT_GT(second_eval, first_exit) << "the second request ran beside the first:\n" << log;
      // The second worker got ready (its device set up) only after the first had ended.
      EXPECT_GT(log.find(": ready in", first_exit), first_exit) << log;
      EXPECT_LT(log.find(": ready in", first_exit), second_eval) << log;
    } else {
      EXPECT_LT(second_eval, first_exit) << "with --overlap the second request waited for the first:\n" << log;
    }
    daemon.stop();
    fs::remove_all(d);
  }
}

TEST(Daemon, SigtermStopsItAndRemovesItsSocketABadStartIsAUsageError) {
  fs::path d = temp_dir("daemon-stop");
  {
    Daemon daemon(d, "");
    ASSERT_TRUE(daemon.ready()) << daemon.log();
    CommandResult twice = run("daemon --socket " + daemon.socket(), 60);
    EXPECT_EQ(twice.status, 2) << twice.output;
    EXPECT_CONTAINS(twice.output, daemon.socket() + ": a daemon is already listening there");
    EXPECT_EQ(daemon.stop(), 0) << daemon.log();
    EXPECT_FALSE(fs::exists(daemon.socket()));
    EXPECT_FALSE(fs::exists(daemon.socket() + ".work"));
    EXPECT_CONTAINS(daemon.log(), "stopping:");
  }
  // A daemon whose workers cannot get ready (cuda where there is no usable GPU) stops with 2.
  if (std::system("nvidia-smi -L >/dev/null 2>&1") != 0) {
    CommandResult no_gpu = run("daemon --device cuda --socket " + (d / "gpu.sock").string(), 120);
    EXPECT_EQ(no_gpu.status, 2) << no_gpu.output;
    EXPECT_CONTAINS(no_gpu.output, "cannot get ready: ");
    EXPECT_CONTAINS(no_gpu.output, "3 workers in a row could not get ready");
    EXPECT_FALSE(fs::exists(d / "gpu.sock"));
  }
  CommandResult no_socket = run("daemon", 60);
  EXPECT_EQ(no_socket.status, 2);
  EXPECT_CONTAINS(no_socket.output, "--socket PATH is required");
  CommandResult bad_policy = run("daemon --socket " + (d / "p.sock").string() + " --policy " + (d / "missing.toml").string(), 60);
  EXPECT_EQ(bad_policy.status, 2);
  EXPECT_CONTAINS(bad_policy.output, "missing.toml");
  EXPECT_FALSE(fs::exists(d / "p.sock"));
  fs::remove_all(d);
}

TEST(DaemonProtocol, OnlyTheVariablesThatShapedTheWorkerMustMatch) {
  using kg::daemon::first_difference;
  EXPECT_EQ(first_difference({"TERM=xterm", "PWD=/a", "KERNELGATE_DAEMON=/s"}, {"TERM=dumb", "PWD=/b"}), "");
  EXPECT_EQ(first_difference({"KERNELGATE_CACHE=/a"}, {"KERNELGATE_CACHE=/b"}), "KERNELGATE_CACHE");
  EXPECT_EQ(first_difference({}, {"CUDA_VISIBLE_DEVICES=1"}), "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(first_difference({"LD_PRELOAD=/x.so"}, {}), "LD_PRELOAD");
  EXPECT_EQ(first_difference({"ATEN_CPU_CAPABILITY=avx2"}, {}), "ATEN_CPU_CAPABILITY");
  EXPECT_EQ(first_difference({"CUBLAS_WORKSPACE_CONFIG=:4096:8"}, {"CUBLAS_WORKSPACE_CONFIG=:16:8"}), "CUBLAS_WORKSPACE_CONFIG");
  EXPECT_EQ(first_difference({"MALLOC_ARENA_MAX=2"}, {}), "MALLOC_ARENA_MAX");
  EXPECT_EQ(first_difference({}, {"GLIBC_TUNABLES=glibc.malloc.tcache_count=0"}), "GLIBC_TUNABLES");
  EXPECT_EQ(first_difference({"LANG=C", "SSH_TTY=/dev/pts/1"}, {"LANG=C.UTF-8"}), "");
  EXPECT_EQ(first_difference({"PATH=/bin", "HOME=/root"}, {"HOME=/root", "PATH=/bin"}), "");
}

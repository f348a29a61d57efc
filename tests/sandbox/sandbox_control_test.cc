// Benign controls: real work that each profile must allow, ending OK with an empty violation,
// plus the plain statuses (RE, SG, XX) and the CLI end to end.
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <chrono>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "sandbox_test_util.h"

namespace {

using namespace kgtest;
using sb::Profile;
using sb::Status;

void expect_ok(const sb::Record& r) {
  EXPECT_EQ(r.status, Status::OK) << describe(r);
  EXPECT_EQ(r.syscall, "") << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.signal, 0) << describe(r);
}

sb::Spec compile_spec(std::vector<std::string> argv, const TempDir& out) {
  auto s = spec(Profile::Compile, std::move(argv));
  s.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C"};
  s.binds.push_back({std::string(KG_SANDBOX_TEST_SRC) + "/controls", false});
  s.binds.push_back({out.path(), true});
  s.workdir = out.path();
  s.limits.cpu_s = 60;
  s.limits.wall_s = 90;
  s.limits.memory_mb = 2048;
  s.limits.max_processes = 64;
  return s;
}

TEST(SandboxControl, GxxCompilesAndLinksARealSource) {
  TempDir out;
  auto r = box(compile_spec({"/usr/bin/g++", "-O1", "-o", out / "small", std::string(KG_SANDBOX_TEST_SRC) + "/controls/small.cc"}, out));
  expect_ok(r);
  EXPECT_TRUE(Snapshot::of(out / "small").exists) << describe(r);
  // And the result runs in run-cpu.
  auto s = spec(Profile::RunCpu, {out / "small"});
  s.binds.push_back({out.path(), false});
  auto r2 = box(s);
  expect_ok(r2);
  EXPECT_EQ(r2.stdout_text, "18\n");
}

TEST(SandboxControl, GxxBuildsASharedObject) {
  TempDir out;
  auto r = box(compile_spec({"/usr/bin/g++", "-O2", "-shared", "-fPIC", "-o", out / "libk.so",
                             std::string(KG_SANDBOX_TEST_SRC) + "/controls/plugin.cc"},
                            out));
  expect_ok(r);
  EXPECT_TRUE(Snapshot::of(out / "libk.so").exists);
}

TEST(SandboxControl, NvccCompilesARealKernel) {
  if (::access("/usr/local/cuda/bin/nvcc", X_OK) != 0) GTEST_SKIP() << "no /usr/local/cuda/bin/nvcc";
  TempDir out;
  char real[PATH_MAX];
  ASSERT_NE(::realpath("/usr/local/cuda", real), nullptr);
  auto s =
      compile_spec({"/usr/local/cuda/bin/nvcc", "-c", "-o", out / "small.o", std::string(KG_SANDBOX_TEST_SRC) + "/controls/small.cu"}, out);
  s.binds.push_back({"/usr/local/cuda", false});
  s.binds.push_back({real, false});
  auto r = box(s);
  expect_ok(r);
  EXPECT_TRUE(Snapshot::of(out / "small.o").exists) << describe(r);
}

TEST(SandboxControl, CpuProgramWithThreadsRunsInRunCpu) {
  auto r = box(spec(Profile::RunCpu, {control("hello_cpu")}));
  expect_ok(r);
  EXPECT_TRUE(contains(r.stdout_text, "sum ")) << describe(r);
}

TEST(SandboxControl, RunnerShapedProgramTalksOverAPassedSocket) {
  for (Profile p : {Profile::RunCpu, Profile::RunCuda}) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    auto s = spec(p, {control("runner_like"), std::string(KG_ATTACK_DIR) + "/libkg_control_plugin.so"});
    s.pass_fds = {sv[1]};
    s.limits.wall_s = 5;  // bounds the recv below if the box dies without closing
    auto proc = sb::start(s);
    ::close(sv[1]);
    char buf[64] = {};
    ssize_t n = ::recv(sv[0], buf, sizeof buf - 1, 0);
    EXPECT_GT(n, 0);
    EXPECT_STREQ(buf, "answer 49");
    ::send(sv[0], "thanks", 6, MSG_NOSIGNAL);
    auto r = proc->wait();
    ::close(sv[0]);
    expect_ok(r);
    EXPECT_EQ(r.stdout_text, "got thanks\n") << describe(r);
  }
}

TEST(SandboxControl, LibtorchProgramStartsTightensAndComputesInRunCpu) {
  if (!KG_HAVE_TORCH_CONTROL) GTEST_SKIP() << "built without libtorch";
  if (::access(KG_TORCH_CONTROL_LIB, F_OK) != 0) GTEST_SKIP() << "libtorch of the build is not on this machine";
  auto s = spec(Profile::RunCpu, {control("torch_runner"), std::string(KG_ATTACK_DIR) + "/libkg_control_plugin.so"});
  if (std::string(KG_TORCH_CONTROL_LIBDIR).rfind("/usr/", 0) != 0 && !std::string(KG_TORCH_CONTROL_LIBDIR).empty())
    s.binds.push_back({KG_TORCH_CONTROL_LIBDIR, false});
  if (!std::string(KG_TORCH_CONTROL_NVIDIA).empty()) s.binds.push_back({KG_TORCH_CONTROL_NVIDIA, false});
  s.env.push_back("OMP_NUM_THREADS=2");
  s.limits.memory_mb = 2048;
  s.limits.cpu_s = 30;
  s.limits.wall_s = 60;
  auto r = box(s);
  expect_ok(r);
  EXPECT_TRUE(contains(r.stdout_text, "torch ok 16384")) << describe(r);
}

TEST(SandboxControl, NonzeroExitIsRE) {
  auto r = box(spec(Profile::Compile, {"/bin/sh", "-c", "exit 7"}));
  EXPECT_EQ(r.status, Status::RE) << describe(r);
  EXPECT_EQ(r.exit_code, 7);
}

TEST(SandboxControl, FatalSignalIsSG) {
  auto r = box(spec(Profile::Compile, {"/bin/sh", "-c", "kill -SEGV $$"}));
  EXPECT_EQ(r.status, Status::SG) << describe(r);
  EXPECT_EQ(r.signal, SIGSEGV);
}

TEST(SandboxControl, MissingCommandIsXXWithTheFailingCall) {
  auto r = box(spec(Profile::RunCpu, {"/no/such/program"}));
  EXPECT_EQ(r.status, Status::XX) << describe(r);
  EXPECT_TRUE(contains(r.message, "execve /no/such/program")) << describe(r);
  EXPECT_TRUE(contains(r.message, "No such file")) << describe(r);
}

TEST(SandboxControl, BadSpecThrowsInTheSupervisor) {
  EXPECT_THROW(sb::start(spec(Profile::RunCpu, {"relative"})), std::runtime_error);
  auto s = spec(Profile::RunCpu, {"/bin/true"});
  s.binds.push_back({"/no/such/dir", false});
  EXPECT_THROW(sb::start(s), std::runtime_error);
  s = spec(Profile::RunCpu, {"/bin/true"});
  s.pass_fds = {987654};
  EXPECT_THROW(sb::start(s), std::runtime_error);
}

TEST(SandboxControl, KillFromAnotherThreadEndsTheTree) {
  auto s = spec(Profile::RunCpu, {attack("spin"), "sleep"});
  std::string marker = next_marker();
  s.env.push_back(marker);
  auto proc = sb::start(s);
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    proc->kill("test");
  });
  auto r = proc->wait();
  killer.join();
  EXPECT_EQ(r.status, Status::SG) << describe(r);
  EXPECT_TRUE(contains(r.message, "test")) << describe(r);
  EXPECT_TRUE(processes_with(marker).empty());
}

TEST(SandboxControl, DestroyingAProcessKillsTheTree) {
  auto s = spec(Profile::Compile, {attack("spin"), "children", "3"});
  std::string marker = next_marker();
  s.env.push_back(marker);
  {
    auto proc = sb::start(s);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(processes_with(marker).empty());
  }
  EXPECT_TRUE(processes_with(marker).empty());
}

TEST(SandboxControl, SupervisorDeathTakesTheBoxWithIt) {
  // A supervisor process starts a box and is SIGKILLed: PR_SET_PDEATHSIG kills init, and init's
  // death kills the pid namespace. Nothing may be left running.
  auto s = spec(Profile::Compile, {attack("spin"), "children", "2"});
  std::string marker = next_marker();
  s.env.push_back(marker);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t sup = ::fork();
  ASSERT_GE(sup, 0);
  if (sup == 0) {
    auto proc = sb::start(s);
    (void)!::write(ready[1], "r", 1);
    ::pause();
    ::_exit(0);
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(processes_with(marker).empty());
  ::kill(sup, SIGKILL);
  ::waitpid(sup, nullptr, 0);
  for (int i = 0; i < 50 && !processes_with(marker).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(processes_with(marker).empty());
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(SandboxControl, BoxOutlivesTheThreadThatStartedIt) {
  // PR_SET_PDEATHSIG follows the thread that cloned: the box must not die with a worker thread.
  std::unique_ptr<sb::Process> proc;
  std::thread worker([&] { proc = sb::start(spec(Profile::Compile, {"/bin/sh", "-c", "sleep 0.3; echo done"})); });
  worker.join();
  auto r = proc->wait();
  expect_ok(r);
  EXPECT_EQ(r.stdout_text, "done\n") << describe(r);
}

TEST(SandboxControl, MountsDoNotPropagateToASharedHostRoot) {
  // In a child process with its own mount namespace whose "/" is shared (as on systemd hosts),
  // a running box must leave that namespace's mount table untouched.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a shared mount namespace";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_SHARED, nullptr) != 0) ::_exit(3);
    auto proc = sb::start(spec(Profile::Compile, {"/bin/sh", "-c", "sleep 0.3"}));
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    std::string table = read_file("/proc/self/mountinfo");
    bool leaked = table.find("kernelgate") != std::string::npos;
    auto r = proc->wait();
    ::_exit(leaked ? 1 : (r.status == Status::OK ? 0 : 2));
  }
  int st = 0;
  ::waitpid(child, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0) << "1: the box's mounts appeared outside; 2: the box failed; 3: set-up";
}

TEST(SandboxControl, ManyBoxesAtOnceFromManyThreads) {
  // The supervisor clones from several threads at once (the clone child allocates nothing, so a
  // lock held by another thread at that moment cannot hang it).
  std::vector<std::thread> ts;
  std::vector<sb::Record> rs(8);
  for (int i = 0; i < 8; ++i)
    ts.emplace_back([i, &rs] { rs[i] = box(spec(i % 2 ? Profile::RunCpu : Profile::Compile, {control("hello_cpu")})); });
  for (auto& t : ts) t.join();
  for (const auto& r : rs) {
    expect_ok(r);
    EXPECT_TRUE(contains(r.stdout_text, "sum ")) << describe(r);
  }
}

TEST(SandboxControl, HostnameAndNetworkAreTheBoxs) {
  auto r = box(spec(Profile::Compile, {"/bin/sh", "-c", "cat /proc/sys/kernel/hostname; cat /proc/net/dev | tail -n +3"}));
  expect_ok(r);
  EXPECT_TRUE(contains(r.stdout_text, "kernelgate\n")) << describe(r);
  EXPECT_TRUE(contains(r.stdout_text, "lo:")) << describe(r);
  EXPECT_FALSE(contains(r.stdout_text, "eth")) << describe(r);
}

TEST(SandboxControl, AuditModeListsInsteadOfKilling) {
  auto s = spec(Profile::RunCpu, {"/bin/sh", "-c", "/bin/true"});
  s.audit_syscalls = true;
  auto r = box(s);
  EXPECT_EQ(r.status, Status::OK) << describe(r);
  EXPECT_TRUE(contains(r.message, "audit: outside the profile:")) << describe(r);
}

TEST(SandboxControl, UnprivilegedSupervisorWorks) {
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "needs root (to drop) and setpriv";
  TempDir d;
  ASSERT_EQ(::chmod(d.path().c_str(), 0777), 0);
  // nobody runs a copy from d: the build tree itself may not be reachable for that user.
  // stdout apart from stderr, where the supervisor's own notes go.
  std::string cmd = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups " + stage_binary(d, KG_SANDBOX_CLI) +
                    " --profile compile --json " + (d / "rec.json") + " -- /bin/sh -c 'id -u; echo x > /tmp/f; cat /tmp/f' > " +
                    (d / "out.txt") + " 2> " + (d / "err.txt");
  int rc = std::system(cmd.c_str());
  std::string out = read_file(d / "out.txt"), err = read_file(d / "err.txt"), rec = read_file(d / "rec.json");
  if (contains(err, "Operation not permitted") && contains(err, "clone"))
    GTEST_SKIP() << "unprivileged user namespaces are disabled here: " << err;
  EXPECT_EQ(WEXITSTATUS(rc), 0) << out << err << rec;
  EXPECT_TRUE(contains(rec, "\"status\": \"OK\"")) << rec;
  EXPECT_EQ(out, "0\nx\n") << out << err;
}

// ---- the CLI end to end ----------------------------------------------------------------------------------

int cli(const std::string& args, std::string* out) {
  TempDir d;
  std::string cmd = std::string(KG_SANDBOX_CLI) + " " + args + " > " + (d / "out") + " 2>&1";
  int rc = std::system(cmd.c_str());
  *out = read_file(d / "out");
  return WEXITSTATUS(rc);
}

TEST(SandboxCli, ExitCodesFollowTheStatus) {
  std::string out;
  EXPECT_EQ(cli("-- /bin/true", &out), 0) << out;
  EXPECT_TRUE(contains(out, "\"status\": \"OK\"")) << out;
  EXPECT_EQ(cli("--profile compile -- /bin/sh -c 'exit 3'", &out), 1) << out;
  EXPECT_TRUE(contains(out, "\"status\": \"RE\"")) << out;
  EXPECT_TRUE(contains(out, "\"exit_code\": 3")) << out;
  EXPECT_EQ(cli("--wall 0.5 --ro " + std::string(KG_ATTACK_DIR) + " -- " + attack("spin") + " sleep", &out), 1) << out;
  EXPECT_TRUE(contains(out, "\"status\": \"TO\"")) << out;
  EXPECT_EQ(cli("--profile run-cpu --ro " + std::string(KG_ATTACK_DIR) + " -- " + attack("escape") + " unshare", &out), 1);
  EXPECT_TRUE(contains(out, "\"syscall\": \"unshare\"")) << out;
}

TEST(SandboxCli, BadUsageIsExit2) {
  std::string out;
  EXPECT_EQ(cli("", &out), 2);
  EXPECT_EQ(cli("--profile nope -- /bin/true", &out), 2);
  EXPECT_TRUE(contains(out, "--profile wants")) << out;
  EXPECT_EQ(cli("--time -1 -- /bin/true", &out), 2);
  EXPECT_EQ(cli("--ro relative -- /bin/true", &out), 2);
  EXPECT_EQ(cli("--ro /no/such/path -- /bin/true", &out), 2);
  EXPECT_EQ(cli("-- no-such-command-kg", &out), 2);
}

TEST(SandboxCli, OutputPassesThroughAndJsonGoesToAFile) {
  TempDir d;
  // stdout apart from stderr: a test running beside this one may leave a box cgroup for this
  // supervisor's start-up sweep to report there.
  std::string cmd =
      std::string(KG_SANDBOX_CLI) + " --json " + (d / "r.json") + " -- /bin/echo hello > " + (d / "out") + " 2> " + (d / "err");
  int rc = std::system(cmd.c_str());
  const std::string out = read_file(d / "out"), err = read_file(d / "err");
  EXPECT_EQ(WEXITSTATUS(rc), 0) << out << err;
  EXPECT_EQ(out, "hello\n") << err;
  std::istringstream notes(err);
  for (std::string line; std::getline(notes, line);) EXPECT_EQ(line.rfind("kernelgate sandbox: ", 0), 0u) << err;
  std::string rec = read_file(d / "r.json");
  for (const char* key : {"status", "exit_code", "signal", "syscall", "cpu_s", "wall_s", "max_rss_kb", "message"})
    EXPECT_TRUE(contains(rec, std::string("\"") + key + "\":")) << rec;
}

TEST(SandboxCli, PassedThroughOutputIsCappedAndTheBoxKilled) {
  TempDir d;
  std::string cmd = std::string(KG_SANDBOX_CLI) + " --json " + (d / "r.json") + " --ro " + KG_ATTACK_DIR + " -- " + attack("output_flood") +
                    " both > " + (d / "out") + " 2>&1";
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 1);
  std::string rec = read_file(d / "r.json");
  EXPECT_TRUE(contains(rec, "\"status\": \"OL\"")) << rec;
  struct stat st;
  ASSERT_EQ(::stat((d / "out").c_str(), &st), 0);
  EXPECT_LE(st.st_size, 1 << 20);  // the default cap of stdout + stderr together
  EXPECT_GT(st.st_size, 0);
}

TEST(SandboxCli, SupervisorSurvivesAnAttackOnItsPid) {
  // The CLI process is the supervisor here; the attack gets its host pid (ESRCH inside).
  TempDir d;
  std::string cmd = "sh -c '" + std::string(KG_SANDBOX_CLI) + " --profile compile --ro " + KG_ATTACK_DIR + " -- " +
                    attack("signal_supervisor") + " kill $$' > " + (d / "out") + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::string out = read_file(d / "out");
  EXPECT_EQ(WEXITSTATUS(rc), 0) << out;
  EXPECT_TRUE(contains(out, "\"status\": \"OK\"")) << out;
}

}  // namespace

// ---- run-cuda on a GPU machine (skipped without /dev/nvidiactl) -------------------------------------

namespace {

using namespace kgtest;
using sb::Profile;
using sb::Status;

bool have_gpu(std::string* why) {
  if (::access("/dev/nvidiactl", F_OK) != 0) {
    *why = "no /dev/nvidiactl (no GPU here)";
    return false;
  }
  if (::access(control("cuda_probe").c_str(), X_OK) != 0) {
    *why = "kg_control_cuda_probe not built (no nvcc)";
    return false;
  }
  return true;
}

// Where the driver's user-space libraries live besides /usr (containers mount them elsewhere).
sb::Spec cuda_spec(const std::string& mode) {
  auto s = spec(Profile::RunCuda, {control("cuda_probe"), mode});
  for (const char* d : {"/usr/local/nvidia", "/usr/local/cuda", "/run/nvidia-persistenced"})
    if (::access(d, F_OK) == 0) s.binds.push_back({d, false});
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) s.env.push_back(std::string("LD_LIBRARY_PATH=") + ld);
  s.limits.memory_mb = 8192;
  s.limits.cpu_s = 30;
  s.limits.wall_s = 60;
  s.limits.max_processes = 128;
  return s;
}

TEST(SandboxCuda, CudaProgramRunsInRunCuda) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << why;
  // The profile alone: no extra binds, no LD_LIBRARY_PATH (the driver's libraries come with it).
  auto s = spec(Profile::RunCuda, {control("cuda_probe"), "ok"});
  s.limits.memory_mb = 8192;
  s.limits.cpu_s = 30;
  s.limits.wall_s = 60;
  auto r = box(s);
  EXPECT_EQ(r.status, Status::OK) << describe(r);
  EXPECT_EQ(r.syscall, "") << describe(r);
  EXPECT_TRUE(contains(r.stdout_text, "RESULT cuda ok")) << describe(r);
  // With a HOME, the JIT cache must be off (its writes come after the second stage).
  s.env.push_back("HOME=/tmp");
  s.env.push_back("CUDA_CACHE_DISABLE=1");
  auto r2 = box(s);
  EXPECT_EQ(r2.status, Status::OK) << describe(r2);
}

TEST(SandboxCuda, CliRunsACudaProgram) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << why;
  std::string out;
  EXPECT_EQ(cli("--profile run-cuda --ro " + std::string(KG_ATTACK_DIR) + " -- " + control("cuda_probe") + " ok", &out), 0) << out;
  EXPECT_TRUE(contains(out, "RESULT cuda ok")) << out;
}

TEST(SandboxCuda, SpinningKernelEndsAtTheWallLimitAndTheDeviceRecovers) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << why;
  auto s = cuda_spec("spin");
  s.limits.wall_s = 3;
  auto r = box(s);
  EXPECT_EQ(r.status, Status::TO) << describe(r);
  auto r2 = box(cuda_spec("ok"));
  EXPECT_EQ(r2.status, Status::OK) << describe(r2);
}

TEST(SandboxCuda, GpuMemoryExhaustionStaysInTheBox) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << why;
  auto before = box(cuda_spec("free"));
  auto r = box(cuda_spec("hog"));
  EXPECT_NE(r.status, Status::XX) << describe(r);
  EXPECT_TRUE(contains(r.stdout_text, "RESULT hog stopped")) << describe(r);
  auto after = box(cuda_spec("free"));
  EXPECT_EQ(after.status, Status::OK) << describe(after);
  // The next box sees the device as the previous one found it (within 1 GiB).
  long fb = 0, fa = 0;
  std::sscanf(before.stdout_text.c_str(), "RESULT free_mib %ld", &fb);
  std::sscanf(after.stdout_text.c_str(), "RESULT free_mib %ld", &fa);
  EXPECT_GT(fb, 0) << describe(before);
  EXPECT_NEAR(fa, fb, 1024) << describe(after);
}

// A box started ahead of its work (a runner waiting in a pool) gets its whole wall time from the
// moment the clock restarts; without the restart the same box ends at its limit.
TEST(SandboxClock, RestartingTheClockGivesTheWholeWallLimitFromThen) {
  auto s = spec(Profile::RunCpu, {"/bin/sleep", "2.5"});
  s.limits.wall_s = 1.5;
  {
    auto p = sb::start(s);
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    p->restart_clock();  // the deadline moves to 2.5 s after the start
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    p->restart_clock();  // and to 3.5 s
    sb::Record r = p->wait();
    EXPECT_EQ(r.status, Status::OK) << describe(r);
    EXPECT_GE(r.wall_s, 2.4) << describe(r);  // the record still counts from the start
  }
  sb::Record control = box(s);
  EXPECT_EQ(control.status, Status::TO) << describe(control);
  EXPECT_NE(control.message.find("wall time limit"), std::string::npos) << describe(control);
}

// A caller that knows the box's work is done takes its record while it still runs: what it wrote
// before (a pipe's bytes the monitor had not read yet included), status OK, the box alive; the
// record after its end is the whole one, and a snapshot then returns that.
TEST(SandboxSnapshot, HasWhatTheBoxWroteWhileItStillRuns) {
  TempDir shared;
  const std::string flag = shared / "written";
  auto s = spec(Profile::Compile, {"/bin/sh", "-c", "printf said-first; printf to-err >&2; : > " + flag + "; exec sleep 30"});
  s.binds.push_back({shared.path(), true});
  const std::string marker = next_marker();
  s.env.push_back(marker);
  auto proc = sb::start(s);
  for (int i = 0; i < 200 && ::access(flag.c_str(), F_OK) != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(::access(flag.c_str(), F_OK), 0) << "the box never got to its flag";
  const sb::Record snap = proc->snapshot();
  EXPECT_EQ(snap.status, Status::OK) << describe(snap);
  EXPECT_EQ(snap.stdout_text, "said-first") << describe(snap);
  EXPECT_EQ(snap.stderr_text, "to-err") << describe(snap);
  EXPECT_FALSE(processes_with(marker).empty()) << "the snapshot ended the box";
  proc->kill("test");
  const sb::Record end = proc->wait();
  EXPECT_EQ(end.status, Status::SG) << describe(end);
  EXPECT_EQ(end.stdout_text, "said-first") << describe(end);
  const sb::Record after = proc->snapshot();
  EXPECT_EQ(after.status, Status::SG) << describe(after);
  EXPECT_TRUE(processes_with(marker).empty());
}

// A supervisor that exits while its boxes start leaves none of them behind. Each box's init is a
// copy of the supervisor holding its descriptors until the payload starts; a supervisor gone
// before init's PR_SET_PDEATHSIG took hold would leave init waiting for the "go" for ever (init
// watches the supervisor's pidfd too). Here a pipe only the supervisor process and its copies
// hold must reach its end once the supervisor has exited at some point of its boxes' start.
TEST(SandboxControl, ASupervisorThatExitsWhileBoxesStartLeavesNoneBehind) {
  for (int trial = 0; trial < 40; ++trial) {
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    const pid_t supervisor = ::fork();
    ASSERT_GE(supervisor, 0);
    if (supervisor == 0) {
      ::close(p[0]);
      for (int i = 0; i < 4; ++i)
        std::thread([] {
          try {
            sb::start(spec(Profile::RunCpu, {"/bin/sleep", "30"})).release();  // ends with its supervisor
          } catch (...) {}
        }).detach();
      std::this_thread::sleep_for(std::chrono::microseconds(500 * trial));
      ::_exit(0);
    }
    ::close(p[1]);
    pollfd end{p[0], POLLIN, 0};
    bool ended = false;
    char buf[16];
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20); std::chrono::steady_clock::now() < until;) {
      if (::poll(&end, 1, 200) > 0 && ::read(p[0], buf, sizeof buf) <= 0) {
        ended = true;
        break;
      }
    }
    ::close(p[0]);
    int st = 0;
    ::waitpid(supervisor, &st, 0);
    ASSERT_TRUE(ended) << "trial " << trial << ": a box's init outlived its supervisor by 20 s, holding its descriptors";
  }
}

}  // namespace

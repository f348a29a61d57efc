// Box cgroups left by a supervisor killed with SIGKILL: named after their owner, swept by the next
// supervisor's start-up, while the boxes of a supervisor still running stay.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cgroup.h"
#include "sandbox_test_util.h"

namespace cg = kg::sandbox::cgroup;

namespace {

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) out.push_back(e->d_name);
    ::closedir(d);
  }
  return out;
}

// Where this process's boxes go: the parents of a fresh box cgroup's directories.
std::vector<std::string> box_bases() {
  std::vector<std::string> out;
  auto probe = cg::Cgroup::create(kg::sandbox::Limits{});
  if (!probe) return out;
  for (const std::string& d : probe->directories()) out.push_back(d.substr(0, d.rfind('/')));
  return out;
}

// Box cgroup directories under `bases` whose name starts with `prefix`.
std::vector<std::string> box_dirs(const std::vector<std::string>& bases, const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& base : bases)
    for (const std::string& name : list_dir(base))
      if (name.compare(0, prefix.size(), prefix) == 0) out.push_back(base + "/" + name);
  return out;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// `kernelgate sandbox` holding one box with `sleep 60` in it.
pid_t start_supervisor() {
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::execl(KG_SANDBOX_CLI, KG_SANDBOX_CLI, "--wall", "60", "--time", "60", "--", "/bin/sleep", "60", nullptr);
    ::_exit(127);
  }
  return pid;
}

// Waits until the supervisor's box cgroups exist (one per hierarchy).
std::vector<std::string> wait_for_boxes(const std::vector<std::string>& bases, pid_t owner) {
  std::vector<std::string> dirs;
  for (int i = 0; i < 1000 && dirs.size() < bases.size(); ++i) {
    dirs = box_dirs(bases, "kg-" + std::to_string(owner) + "-");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return dirs;
}

}  // namespace

TEST(SandboxCgroupSweep, BoxNamesCarryTheirOwnerAndAReusedPidIsNoOwner) {
  const cg::BoxOwner& me = cg::self_owner();
  EXPECT_GT(me.start_ticks, 0u);
  EXPECT_GT(me.pid_ns, 0u);
  std::string name = "kg-" + std::to_string(me.pid) + "-" + std::to_string(me.start_ticks) + "-" + std::to_string(me.pid_ns) + "-7";
  auto parsed = cg::parse_box_name(name);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->pid, me.pid);
  EXPECT_EQ(parsed->start_ticks, me.start_ticks);
  EXPECT_FALSE(parsed->legacy);
  EXPECT_TRUE(cg::owner_alive(*parsed));
  // The same pid with another start time is a process that came after the owner.
  cg::BoxOwner reused = *parsed;
  reused.start_ticks += 1;
  EXPECT_FALSE(cg::owner_alive(reused));
  // Another pid namespace: its pids say nothing here, so it counts as alive.
  cg::BoxOwner foreign = reused;
  foreign.pid_ns += 1;
  EXPECT_TRUE(cg::owner_alive(foreign));
  // Not box cgroups: never swept.
  for (const char* other : {"kg-supervisor", "kg-", "kg-12-x", "kg-1-2-3", "user.slice", "kg-0-1"})
    EXPECT_FALSE(cg::parse_box_name(other)) << other;
  auto legacy = cg::parse_box_name("kg-" + std::to_string(me.pid) + "-3");
  ASSERT_TRUE(legacy);
  EXPECT_TRUE(legacy->legacy);
  EXPECT_TRUE(cg::owner_alive(*legacy));
}

TEST(SandboxCgroupSweep, AKilledSupervisorsBoxesAreSweptAtTheNextStartAndALiveOnesStay) {
  if (::geteuid() != 0) GTEST_SKIP() << "box cgroups need root here (" << cg::describe_layout() << ")";
  const std::vector<std::string> bases = box_bases();
  if (bases.empty()) GTEST_SKIP() << "no usable cgroup: " << cg::describe_layout();
  const size_t all_before = box_dirs(bases, "kg-").size();

  pid_t killed = start_supervisor();
  pid_t live = start_supervisor();
  ASSERT_GT(killed, 0);
  ASSERT_GT(live, 0);
  std::vector<std::string> killed_dirs = wait_for_boxes(bases, killed);
  std::vector<std::string> live_dirs = wait_for_boxes(bases, live);
  ASSERT_EQ(killed_dirs.size(), bases.size());
  ASSERT_EQ(live_dirs.size(), bases.size());

  ASSERT_EQ(::kill(killed, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(killed, &status, 0), killed);
  ASSERT_TRUE(WIFSIGNALED(status));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (const std::string& d : killed_dirs) EXPECT_TRUE(exists(d)) << d << ": the kill -9 left nothing to sweep";

  // A stale box that still holds a process, named as a pid that was reused: this process's pid
  // with a start time it does not have.
  const cg::BoxOwner& me = cg::self_owner();
  const std::string stale_name =
      "kg-" + std::to_string(me.pid) + "-" + std::to_string(me.start_ticks + 1) + "-" + std::to_string(me.pid_ns) + "-0";
  const std::string stale = bases.front() + "/" + stale_name;
  ASSERT_EQ(::mkdir(stale.c_str(), 0755), 0) << stale << ": " << std::strerror(errno);
  pid_t orphan = ::fork();
  if (orphan == 0) {
    ::execl("/bin/sleep", "sleep", "60", nullptr);
    ::_exit(127);
  }
  kgtest::write_file(stale + "/cgroup.procs", std::to_string(orphan));
  ASSERT_NE(kgtest::read_file(stale + "/cgroup.procs").find(std::to_string(orphan)), std::string::npos);

  const size_t all_mid = box_dirs(bases, "kg-").size();
  // The next supervisor: its first box runs the start-up sweep.
  kgtest::TempDir tmp;
  const std::string err_file = tmp / "stderr";
  std::string cmd = std::string(KG_SANDBOX_CLI) + " -- /bin/true >/dev/null 2>" + err_file;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  const std::string said = kgtest::read_file(err_file);
  const size_t all_after = box_dirs(bases, "kg-").size();
  std::printf("box cgroup dirs: %zu before, %zu with a killed and a live supervisor and a planted stale box, %zu after the sweep\n",
              all_before, all_mid, all_after);
  std::printf("the next supervisor said: %s", said.c_str());

  for (const std::string& d : killed_dirs) EXPECT_FALSE(exists(d)) << d << " survived the sweep";
  EXPECT_FALSE(exists(stale)) << stale << " survived the sweep";
  ASSERT_EQ(::waitpid(orphan, &status, 0), orphan);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the process in the stale box was not killed";
  for (const std::string& d : live_dirs) EXPECT_TRUE(exists(d)) << d << ": a live supervisor's box was swept";
  EXPECT_TRUE(kgtest::contains(said, "stale box cgroup")) << said;
  EXPECT_EQ(::kill(live, 0), 0) << "the live supervisor died";

  // Its owner gone too, the live one's boxes go at the next sweep.
  ::kill(live, SIGKILL);
  ::waitpid(live, &status, 0);
  cg::Sweep again = cg::sweep_stale();
  for (const std::string& d : live_dirs) EXPECT_FALSE(exists(d)) << d;
  EXPECT_TRUE(again.failed.empty()) << again.failed.front();
}

TEST(SandboxCgroupSweep, AnUnprivilegedSupervisorLeavesRootsStaleBoxesAlone) {
  // Started from root's cgroup, nobody's supervisor lists the same box directory as root's. A box
  // of a root supervisor killed a moment ago is root's to sweep: nobody could not remove it and
  // must not report it as left behind (its note on stderr once broke a test running beside this).
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "needs root (to drop) and setpriv";
  const std::vector<std::string> bases = box_bases();
  if (bases.empty()) GTEST_SKIP() << "no usable cgroup: " << cg::describe_layout();
  const cg::BoxOwner& me = cg::self_owner();
  const std::string stale =
      bases.front() + "/kg-" + std::to_string(me.pid) + "-" + std::to_string(me.start_ticks + 1) + "-" + std::to_string(me.pid_ns) + "-0";
  ASSERT_EQ(::mkdir(stale.c_str(), 0755), 0) << stale << ": " << std::strerror(errno);

  kgtest::TempDir d;
  ASSERT_EQ(::chmod(d.path().c_str(), 0777), 0);
  const std::string cmd = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups " + kgtest::stage_binary(d, KG_SANDBOX_CLI) +
                          " -- /bin/true > /dev/null 2> " + (d / "err");
  const int rc = std::system(cmd.c_str());
  const std::string err = kgtest::read_file(d / "err");
  if (kgtest::contains(err, "Operation not permitted") && kgtest::contains(err, "clone")) {
    ::rmdir(stale.c_str());
    GTEST_SKIP() << "unprivileged user namespaces are disabled here: " << err;
  }
  EXPECT_EQ(WEXITSTATUS(rc), 0) << err;
  EXPECT_FALSE(kgtest::contains(err, "stale box cgroup")) << err;
  EXPECT_TRUE(exists(stale)) << "nobody's supervisor removed root's box";

  // Root's next sweep takes it.
  cg::Sweep sweep = cg::sweep_stale();
  EXPECT_FALSE(exists(stale)) << stale;
  if (exists(stale)) ::rmdir(stale.c_str());
  EXPECT_TRUE(sweep.failed.empty()) << sweep.failed.front();
}

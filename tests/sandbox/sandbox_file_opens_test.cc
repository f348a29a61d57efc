// SandboxFileOpens: a run box's opens once the supervisor watches them (Process::watch_opens):
// the runtime's own files open, everything else is refused with EACCES and named with its path;
// before watching (start-up) every open goes ahead. Run for real with the read_files attack.
#include <unistd.h>

#include "file_opens.h"
#include "sandbox_test_util.h"

namespace {

using namespace kgtest;
using sb::Profile;
using sb::Status;

struct Opened {
  sb::Record record;
  std::vector<sb::RefusedOpen> refused;
};

// read_files on `paths` in a run-cpu box, watched or not from before its first open.
Opened open_in_box(const std::vector<std::string>& paths, bool watch) {
  int p[2];
  EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
  std::vector<std::string> argv = {attack("read_files")};
  argv.insert(argv.end(), paths.begin(), paths.end());
  sb::Spec s = spec(Profile::RunCpu, argv);
  s.pass_fds = {p[0]};
  std::unique_ptr<sb::Process> box = sb::start(s);
  ::close(p[0]);
  if (watch) box->watch_opens();
  EXPECT_EQ(::write(p[1], "g", 1), 1);
  ::close(p[1]);
  Opened o;
  o.record = box->wait();
  o.refused = box->take_refused_opens();
  return o;
}

const std::vector<std::string> kPaths = {"/proc/1/cmdline", "../results.json", "/proc/self/status", "/etc/passwd"};

TEST(SandboxFileOpens, WatchedOpensOutsideTheRuntimeAreRefusedAndNamed) {
  const std::string own = attack("read_files");  // a read-only bind: the runtime's own files
  std::vector<std::string> paths = kPaths;
  paths.push_back(own);
  const Opened o = open_in_box(paths, true);
  ASSERT_EQ(o.record.status, Status::OK) << describe(o.record);
  const std::string& out = o.record.stdout_text;
  EXPECT_NE(out.find("RESULT /proc/1/cmdline refused EACCES"), std::string::npos) << out;
  EXPECT_NE(out.find("RESULT ../results.json refused EACCES"), std::string::npos) << out;
  EXPECT_NE(out.find("RESULT /etc/passwd refused EACCES"), std::string::npos) << out;
  EXPECT_NE(out.find("RESULT /proc/self/status opened"), std::string::npos) << out;
  EXPECT_NE(out.find("RESULT " + own + " opened"), std::string::npos) << out;
  std::string refused;
  for (const auto& r : o.refused) refused += " " + r.syscall + " " + r.path;
  // The dynamic loader's own searches are not the program's opens: where the test binary's
  // RUNPATH names a folder the box does not bind (the GPU machine's private prefix of .deb
  // headers and libraries), a library loaded lazily (libgcc_s) is looked up there first.
  std::vector<sb::RefusedOpen> deliberate;
  for (const auto& r : o.refused) {
    const std::string name = r.path.substr(r.path.rfind('/') + 1);
    if (!(name.rfind("lib", 0) == 0 && name.find(".so") != std::string::npos)) deliberate.push_back(r);
  }
  ASSERT_EQ(deliberate.size(), 3u) << "refused:" << refused;
  EXPECT_EQ(deliberate[0].syscall, "openat");
  EXPECT_EQ(deliberate[0].path, "/proc/1/cmdline");
  EXPECT_EQ(deliberate[1].path, "../results.json");
  EXPECT_EQ(deliberate[2].path, "/etc/passwd");
}

TEST(SandboxFileOpens, ControlBeforeWatchingEveryOpenGoesAhead) {
  const Opened o = open_in_box(kPaths, false);
  ASSERT_EQ(o.record.status, Status::OK) << describe(o.record);
  const std::string& out = o.record.stdout_text;
  EXPECT_NE(out.find("RESULT /proc/1/cmdline opened"), std::string::npos) << out;
  EXPECT_NE(out.find("RESULT ../results.json refused ENOENT"), std::string::npos) << out;  // not in the box at all
  EXPECT_NE(out.find("RESULT /etc/passwd opened"), std::string::npos) << out;
  EXPECT_TRUE(o.refused.empty());
}

TEST(SandboxFileOpens, RuntimePathsAreTheRuntimesOwnFilesOnly) {
  namespace fo = kg::sandbox::file_opens;
  const std::vector<std::string> trees = {"/usr", "/opt/torch/lib", "/etc/ld.so.cache"};
  for (const char* yes : {"/usr/lib/x86_64-linux-gnu/libgomp.so.1", "/opt/torch/lib/libc10.so", "/opt/torch/lib", "/etc/ld.so.cache",
                          "//usr//lib/libm.so.6", "/proc/self/status", "/proc/thread-self/stat", "/proc/self/task",
                          "/proc/self/task/12/stat", "/proc/cpuinfo", "/proc/sys/vm/overcommit_memory", "/sys/devices/system/cpu/online",
                          "/dev/null", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-caps/nvidia-cap1"})
    EXPECT_TRUE(fo::runtime_path(yes, trees)) << yes;
  for (const char* no : {"/proc/1/cmdline",
                         "/proc/2/status",
                         "/proc/self/root/proc/1/cmdline",
                         "/proc/self/cwd/x",
                         "/proc/self/fd/3",
                         "/proc/self/exe",
                         "/proc/self/mem",
                         "/proc/self/map_files/1-2",
                         "/proc/self/task/1/root",
                         "../results.json",
                         "results.json",
                         "/usr/../proc/1/cmdline",
                         "/usr/lib/./x",
                         "/opt/torch/lib2/x",
                         "/opt/torch",
                         "/tmp/x",
                         "/etc/passwd",
                         "/etc/ld.so.cache/x/..",
                         "/dev/shm/x",
                         "/dev/fd/3",
                         "",
                         "/"})
    EXPECT_FALSE(fo::runtime_path(no, trees)) << no;
  // A process's own entries under its numeric pid, never another's.
  EXPECT_TRUE(fo::runtime_path("/proc/7/status", trees, 7));
  EXPECT_FALSE(fo::runtime_path("/proc/7/root/x", trees, 7));
  EXPECT_FALSE(fo::runtime_path("/proc/1/cmdline", trees, 7));
}

TEST(SandboxFileOpens, AProcessIdInTheBoxIsItsInnermostOne) {
  EXPECT_EQ(kg::sandbox::file_opens::pid_in_box(::getpid()), ::getpid());  // this test runs in no box
  EXPECT_EQ(kg::sandbox::file_opens::pid_in_box(-1), 0);
}

TEST(SandboxFileOpens, EvidencePathsAreEscaped) {
  EXPECT_EQ(kg::sandbox::file_opens::printable("/proc/1/cmdline"), "/proc/1/cmdline");
  EXPECT_EQ(kg::sandbox::file_opens::printable(std::string("/a\nb\\c\x01", 7)), "/a\\x0ab\\x5cc\\x01");
}

}  // namespace

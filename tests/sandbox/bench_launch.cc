// bench_sandbox_launch: per-launch cost of a trivial command (/bin/true) under kernelgate's
// sandbox, under bubblewrap with comparable isolation, and bare, interleaved in one run.
//
//   bench_sandbox_launch [N=200] [PATH-TO-kg_sandbox_cli]
//
// kernelgate (library) is sb::run() in this process (how the supervisor launches children);
// kernelgate (CLI), when a CLI path is given, is a fork+exec of `kernelgate sandbox` as a whole,
// which is the fair comparison with the bwrap process. bwrap gets --unshare-all (user, ipc, pid,
// net, uts, cgroup), --die-with-parent, --new-session, read-only binds of the same system paths,
// a tmpfs /tmp, a fresh /proc and a minimal /dev. Prints medians and the ratios kernelgate/bwrap.
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernelgate/sandbox.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double spawn_wait(const std::vector<std::string>& argv) {
  std::vector<char*> a;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
  auto t0 = Clock::now();
  pid_t pid;
  if (posix_spawn(&pid, a[0], &fa, nullptr, a.data(), environ) != 0) {
    std::perror("posix_spawn");
    std::exit(2);
  }
  int st;
  waitpid(pid, &st, 0);
  double dt = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  posix_spawn_file_actions_destroy(&fa);
  if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0)) {
    std::fprintf(stderr, "%s failed (status %d)\n", a[0], st);
    std::exit(2);
  }
  return dt;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 200;
  std::string cli = argc > 2 ? argv[2] : "";
  namespace sb = kg::sandbox;

  sb::Spec spec;
  spec.profile = sb::Profile::RunCpu;
  spec.argv = {"/bin/true"};
  spec.env = {"PATH=/usr/bin:/bin"};

  std::vector<std::string> bwrap = {"/usr/bin/bwrap", "--unshare-all", "--die-with-parent", "--new-session"};
  for (const char* p : {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache"}) {
    struct stat st;
    if (lstat(p, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char t[PATH_MAX];
      ssize_t k = readlink(p, t, sizeof t - 1);
      t[k < 0 ? 0 : k] = 0;
      bwrap.insert(bwrap.end(), {"--symlink", t, p});
    } else {
      bwrap.insert(bwrap.end(), {"--ro-bind", p, p});
    }
  }
  bwrap.insert(bwrap.end(), {"--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev", "--chdir", "/tmp", "--clearenv", "/bin/true"});
  std::vector<std::string> kg_cli;
  if (!cli.empty()) kg_cli = {cli, "--json", "/dev/null", "--", "/bin/true"};

  bool have_bwrap = ::access("/usr/bin/bwrap", X_OK) == 0;
  if (!have_bwrap) std::printf("no /usr/bin/bwrap: bubblewrap not measured\n");
  // Warm-up: page cache, the profile's BPF, the cgroup discovery.
  for (int i = 0; i < 5; ++i) {
    sb::run(spec);
    if (have_bwrap) spawn_wait(bwrap);
  }
  std::vector<double> t_kg, t_cli, t_bwrap, t_bare;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    sb::Record r = sb::run(spec);
    t_kg.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (r.status != sb::Status::OK) {
      std::fprintf(stderr, "kernelgate run failed: %s\n", r.to_json().c_str());
      return 2;
    }
    if (!kg_cli.empty()) t_cli.push_back(spawn_wait(kg_cli));
    if (have_bwrap) t_bwrap.push_back(spawn_wait(bwrap));
    t_bare.push_back(spawn_wait({"/bin/true"}));
  }
  double kg = median(t_kg), bw = median(t_bwrap), bare = median(t_bare);
  std::printf("launches: %d each, /bin/true, interleaved\n", n);
  std::printf("kernelgate (library)  median %.3f ms\n", kg);
  if (!t_cli.empty()) std::printf("kernelgate (CLI)      median %.3f ms\n", median(t_cli));
  std::printf("bubblewrap            median %.3f ms\n", bw);
  std::printf("bare                  median %.3f ms\n", bare);
  if (have_bwrap) {
    std::printf("ratio kernelgate/bubblewrap (library) %.2f\n", kg / bw);
    if (!t_cli.empty()) std::printf("ratio kernelgate/bubblewrap (CLI)     %.2f\n", median(t_cli) / bw);
  }
  return 0;
}

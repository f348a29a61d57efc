// A5 read secrets. Modes:
//   env                 print the environment; kBreached if anything beyond argv[2..] (allowed keys) is set
//   fds N               every fd that is open besides 0, 1, 2 and the first N passed ones is a breach
//   paths P...          open each host path for reading (expected outputs, the seed, the
//                       supervisor's files): any success is a breach
//   proc PID            the supervisor's /proc entry (host pid, invisible in our pid namespace),
//                       and /proc/1 (the sandbox's init, a copy of the supervisor): environ, mem,
//                       maps, cmdline of init must not be readable
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "attack.h"

extern char** environ;

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  std::string mode = argc > 1 ? argv[1] : "env";
  bool breached = false;
  if (mode == "env") {
    for (char** e = environ; *e; ++e) {
      std::string kv = *e, key = kv.substr(0, kv.find('='));
      bool allowed = false;
      for (int i = 2; i < argc; ++i) allowed |= key == argv[i];
      result("env " + key, allowed ? "expected" : "UNEXPECTED");
      breached |= !allowed;
    }
  } else if (mode == "fds") {
    int passed = argc > 2 ? std::atoi(argv[2]) : 0;
    for (int fd = 0; fd < 4096; ++fd) {
      if (::fcntl(fd, F_GETFD) < 0) continue;
      char link[64], target[256] = {};
      std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
      ::readlink(link, target, sizeof target - 1);
      bool ok = fd <= 2 + passed;
      result("fd " + std::to_string(fd) + " " + target, ok ? "expected" : "UNEXPECTED");
      breached |= !ok;
    }
  } else if (mode == "paths") {
    for (int i = 2; i < argc; ++i) breached |= !refused(std::string("read ") + argv[i], ::open(argv[i], O_RDONLY));
  } else if (mode == "proc") {
    std::string pid = argc > 2 ? argv[2] : "1";
    for (const char* f : {"environ", "cmdline", "maps", "mem", "status"})
      breached |= !refused("read /proc/" + pid + "/" + f, ::open(("/proc/" + pid + "/" + f).c_str(), O_RDONLY));
    for (const char* f : {"environ", "mem", "maps"}) {
      int fd = ::open((std::string("/proc/1/") + f).c_str(), O_RDONLY);
      char buf[64];
      long n = fd < 0 ? -1 : ::read(fd, buf, sizeof buf);
      breached |= !refused(std::string("read /proc/1/") + f, n > 0 ? 0 : -1);
    }
    for (const char* f : {"fd/0", "fd/3", "root", "cwd"}) {
      int fd = ::open((std::string("/proc/1/") + f).c_str(), O_RDONLY);
      breached |= !refused(std::string("open /proc/1/") + f, fd);
    }
  }
  return breached ? kBreached : 0;
}

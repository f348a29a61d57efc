// A14 core dumps: try to raise RLIMIT_CORE (hard limit is 0: EPERM) and to become dumpable, then
// abort() with the working directory on a writable bind. No core file may appear there.
#include <csignal>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "attack.h"

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  rlimit rl{RLIM_INFINITY, RLIM_INFINITY};
  refused("setrlimit core unlimited", ::setrlimit(RLIMIT_CORE, &rl));
  ::prctl(PR_SET_DUMPABLE, 1);
  // A secret-looking page in memory, in case a core does get written.
  static char secret[4096];
  std::memset(secret, 'S', sizeof secret);
  std::abort();
}

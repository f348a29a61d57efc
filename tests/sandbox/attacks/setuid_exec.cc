// A12 setuid binaries and file capabilities: execs argv[1] (a setuid-root, file-capability copy of
// caps_report, or a system setuid program such as /usr/bin/su) and passes its exit status through.
// no_new_privs, nosuid mounts, the empty bounding set and locked securebits must leave it with
// nothing.
#include <unistd.h>

#include "attack.h"

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  if (argc < 2) return 2;
  ::execv(argv[1], argv + 1);
  result("exec", strerrorname_np(errno));
  return 0;
}

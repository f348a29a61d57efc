// A1 fork bomb. Modes:
//   count   fork until fork fails; children sleep; prints how many succeeded; exit 0 when fork
//           failed before the count passed argv[2] (the pids limit), kBreached otherwise
//   storm   every process forks forever, ignoring failures (the classic :(){ :|:& };:) - only
//           the wall clock ends it; the test checks that nothing is left afterwards
// In the run profiles fork itself is outside the filter (the record names clone).
#include <unistd.h>

#include "attack.h"

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  std::string mode = argc > 1 ? argv[1] : "count";
  if (mode == "storm") {
    while (true) ::fork();
  }
  long limit = argc > 2 ? std::atol(argv[2]) : 64;
  long n = 0;
  while (n < 100000) {
    pid_t p = ::fork();
    if (p == 0) {
      ::pause();
      _exit(0);
    }
    if (p < 0) {
      result("fork", "failed after " + std::to_string(n) + " " + strerrorname_np(errno));
      return n < limit ? 0 : kBreached;
    }
    ++n;
  }
  result("fork", "never failed");
  return kBreached;
}

// A8 run forever. Modes:
//   cpu          busy loop
//   sleep        sleep forever (only the wall clock ends it)
//   pause        block in pause() with every catchable signal ignored
//   ignore_xcpu  busy loop with SIGXCPU ignored (the hard RLIMIT_CPU or the tree accounting ends it)
//   threads N    N busy threads (CPU time of the tree grows N times faster than the wall clock)
//   children N   N busy processes, each below the per-process RLIMIT_CPU for a while
#include <csignal>
#include <pthread.h>
#include <unistd.h>

#include "attack.h"

static void* busy(void*) {
  volatile unsigned long x = 0;
  while (true) ++x;
  return nullptr;
}

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  std::string mode = argc > 1 ? argv[1] : "cpu";
  int n = argc > 2 ? std::atoi(argv[2]) : 2;
  if (mode == "cpu") busy(nullptr);
  if (mode == "sleep")
    while (true) ::sleep(1000);
  if (mode == "pause") {
    for (int s = 1; s < 32; ++s) ::signal(s, SIG_IGN);
    while (true) ::pause();
  }
  if (mode == "ignore_xcpu") {
    ::signal(SIGXCPU, SIG_IGN);
    busy(nullptr);
  }
  if (mode == "threads") {
    for (int i = 0; i < n; ++i) {
      pthread_t t;
      pthread_create(&t, nullptr, busy, nullptr);
    }
    busy(nullptr);
  }
  if (mode == "children") {
    for (int i = 0; i < n; ++i)
      if (::fork() == 0) busy(nullptr);
    busy(nullptr);
  }
  return 2;
}

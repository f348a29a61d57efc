// A1 thread bomb: create threads until pthread_create fails (the pids limit counts threads).
// Exit 0 when it failed before argv[1] threads, kBreached otherwise.
#include <pthread.h>
#include <unistd.h>

#include "attack.h"

static void* sleeper(void*) {
  while (true) ::pause();
  return nullptr;
}

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  long limit = argc > 1 ? std::atol(argv[1]) : 64;
  long n = 0;
  while (n < 100000) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    int rc = pthread_create(&t, &a, sleeper, nullptr);
    if (rc != 0) {
      result("pthread_create", "failed after " + std::to_string(n) + " " + strerrorname_np(rc));
      std::fflush(stdout);
      _exit(n < limit ? 0 : kBreached);
    }
    ++n;
  }
  result("pthread_create", "never failed");
  _exit(kBreached);
}

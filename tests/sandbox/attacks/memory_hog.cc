// A7 memory exhaustion. Modes:
//   malloc     allocate and touch 16 MiB blocks forever
//   populate   one huge mmap(MAP_POPULATE) of argv[2] MiB
//   tmpfs      write to a file in the scratch tmpfs (tmpfs pages are charged to the box)
//   memfd      fill a memfd (run profiles allow memfd_create)
//   children   4 processes each allocating (the limit is the whole tree's)
// Never exits by itself when the limit holds: the record must say ML.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "attack.h"

static void hog() {
  while (true) {
    // volatile: the stores must happen (the compiler may not drop a leaked, unread block)
    volatile char* p = static_cast<volatile char*>(std::malloc(16 << 20));
    if (!p) continue;
    for (size_t i = 0; i < (16u << 20); i += 4096) p[i] = 1;
  }
}

static void fill(int fd) {
  std::vector<char> b(1 << 20, 'm');
  while (::write(fd, b.data(), b.size()) > 0) {}
  result("fill", std::string("stopped ") + strerrorname_np(errno));
}

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  std::string mode = argc > 1 ? argv[1] : "malloc";
  if (mode == "malloc") hog();
  if (mode == "populate") {
    size_t mb = argc > 2 ? std::atol(argv[2]) : 4096;
    void* p = ::mmap(nullptr, mb << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    result("mmap populate", p == MAP_FAILED ? strerrorname_np(errno) : "mapped");
    return 0;
  }
  if (mode == "tmpfs") fill(::open("/tmp/hog", O_CREAT | O_WRONLY, 0600));
  if (mode == "memfd") fill(static_cast<int>(::syscall(SYS_memfd_create, "hog", 0)));
  if (mode == "children") {
    for (int i = 0; i < 4; ++i)
      if (::fork() == 0) hog();
    while (::wait(nullptr) > 0) {}
  }
  return 0;
}

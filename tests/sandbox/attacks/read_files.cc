// A5 (reading what the box can see): once the supervisor watches the box's opens
// (Process::watch_opens), every open outside the runtime's own files must be refused and named.
// Waits for a byte on fd 3 (sent once the test has called watch_opens), then opens each path of
// its arguments for reading and prints "RESULT <path> opened" or "RESULT <path> refused <errno>".
#include <fcntl.h>
#include <unistd.h>

#include "attack.h"

int main(int argc, char** argv) {
  char go = 0;
  if (::read(3, &go, 1) != 1) return 3;
  for (int i = 1; i < argc; ++i) {
    const int fd = ::openat(AT_FDCWD, argv[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      result(argv[i], std::string("refused ") + strerrorname_np(errno));
      continue;
    }
    result(argv[i], "opened");
    ::close(fd);
  }
  return 0;
}

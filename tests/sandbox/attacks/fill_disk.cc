// A3 fill the scratch tmpfs or /dev/shm: write 1 MiB blocks to argv[1] (and fallocate a huge
// range first) until the filesystem refuses (SIGXFSZ ignored: the filesystem must be what stops it). Prints the bytes written; exit 0 when it stopped
// with ENOSPC/EFBIG below argv[2] MiB, kBreached when it wrote more.
#include <csignal>
#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "attack.h"

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  const char* path = argc > 1 ? argv[1] : "/tmp/fill";
  long cap_mb = argc > 2 ? std::atol(argv[2]) : 512;
  ::signal(SIGXFSZ, SIG_IGN);  // the file-size limit is A9's business; here the filesystem must stop us
  int fd = ::open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd < 0) {
    result("open", strerrorname_np(errno));
    return 0;
  }
  int fa = ::fallocate(fd, 0, 0, 64L << 30);
  result("fallocate-64G", fa == 0 ? "SUCCEEDED" : strerrorname_np(errno));
  ::ftruncate(fd, 0);
  std::vector<char> block(1 << 20, 'x');
  long long total = 0;
  while (true) {
    ssize_t n = ::write(fd, block.data(), block.size());
    if (n <= 0) {
      result("write", "stopped at " + std::to_string(total >> 20) + " MiB " + strerrorname_np(errno));
      break;
    }
    total += n;
  }
  return (total >> 20) <= cap_mb && fa != 0 ? 0 : kBreached;
}

// A9 huge outputs. Modes:
//   stdout / stderr / both   write 64 KiB blocks forever
//   file PATH                grow a file forever (RLIMIT_FSIZE: SIGXFSZ)
//   file_ignore PATH         the same with SIGXFSZ ignored: writes fail with EFBIG at the cap;
//                            exits 0 when it stopped there, kBreached when it got past argv[3] MiB
#include <csignal>
#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "attack.h"

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  std::string mode = argc > 1 ? argv[1] : "stdout";
  std::vector<char> b(64 << 10, 'A');
  if (mode == "stdout" || mode == "stderr" || mode == "both") {
    while (true) {
      if (mode != "stderr") ::write(1, b.data(), b.size());
      if (mode != "stdout") ::write(2, b.data(), b.size());
    }
  }
  if (mode == "file" || mode == "file_ignore") {
    if (mode == "file_ignore") ::signal(SIGXFSZ, SIG_IGN);
    int fd = ::open(argc > 2 ? argv[2] : "/tmp/big", O_CREAT | O_WRONLY | O_TRUNC, 0600);
    long long total = 0;
    while (true) {
      ssize_t n = ::write(fd, b.data(), b.size());
      if (n <= 0) break;
      total += n;
    }
    result("file", "stopped at " + std::to_string(total >> 20) + " MiB " + strerrorname_np(errno));
    long cap = argc > 3 ? std::atol(argv[3]) : 256;
    return (total >> 20) <= cap ? 0 : kBreached;
  }
  return 2;
}

#include "kernelgate/operator_files.h"

#include "kernelgate/unique_fd.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kg::policy {

const char* file_kind(unsigned mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

std::string read_operator_file(const std::string& path, uint64_t max_bytes, const std::string& what) {
  auto fail = [&](const std::string& why) { return std::runtime_error(path + ": cannot read " + what + ": " + why); };
  const std::string limit = std::to_string(max_bytes) + " bytes for a " + what;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) throw fail(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw fail(std::string("fstat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw fail(std::string("is ") + file_kind(st.st_mode) + ", not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes) throw fail("is " + std::to_string(st.st_size) + " bytes, over the limit of " + limit);
  std::string text;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail(std::string("read: ") + std::strerror(errno));
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > max_bytes) throw fail("grew past the limit of " + limit + " while being read");
  }
  return text;
}

}  // namespace kg::policy

// Writing an output file whole or not at all: a temporary file in the same folder, synced, renamed
// over the destination, and the folder synced, so neither a reader nor a crash sees half of it.
#include "kernelgate/results.h"
#include "kernelgate/unique_fd.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>

namespace kg::results {
namespace {

std::string errno_text(int err) {
  const char* name = ::strerrorname_np(err);
  return std::string(std::strerror(err)) + " (" + (name ? name : std::to_string(err)) + ")";
}

[[noreturn]] void fail(const std::string& path, const std::string& step, int err) {
  throw std::runtime_error(path + ": cannot write (" + step + "): " + errno_text(err));
}

// The temporary file, removed unless it was renamed into place.
class TempFile {
 public:
  explicit TempFile(std::string path) : path_(std::move(path)) {}
  ~TempFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  void keep() { path_.clear(); }

 private:
  std::string path_;
};

void write_all(int fd, const std::string& text, const std::string& path) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, "write", errno);
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

void write_atomically(const std::string& path, const std::string& text) {
  const std::filesystem::path dest(path);
  const std::filesystem::path folder = dest.has_parent_path() ? dest.parent_path() : std::filesystem::path(".");
  std::string pattern = (folder / ("." + dest.filename().string() + ".tmp-XXXXXX")).string();
  int raw = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (raw < 0) fail(path, "create a temporary file in " + folder.string(), errno);
  UniqueFd fd(raw);
  TempFile temp(pattern);
  if (::fchmod(fd.get(), 0644) != 0) fail(path, "chmod " + temp.path(), errno);
  write_all(fd.get(), text, path);
  if (::fsync(fd.get()) != 0) fail(path, "fsync " + temp.path(), errno);
  if (fd.close() != 0) fail(path, "close " + temp.path(), errno);
  if (::rename(temp.path().c_str(), path.c_str()) != 0) fail(path, "rename " + temp.path(), errno);
  temp.keep();
  UniqueFd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) fail(path, "open its folder", errno);
  if (::fsync(dir.get()) != 0) fail(path, "fsync its folder", errno);
}

}  // namespace kg::results

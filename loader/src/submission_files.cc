#include "submission_files.h"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace kg::loader::submission {
namespace {

constexpr size_t kShownTargetChars = 200;

std::string errno_text(int err) { return std::strerror(err); }

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

}  // namespace

std::string refusal(const Entry& e) {
  switch (e.type) {
    case S_IFDIR: return "";
    case S_IFREG: return e.links == 1 ? "" : "a regular file with " + std::to_string(e.links) + " hard links";
    case S_IFLNK: return "a symbolic link (to " + e.link_target + ")";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    default: return "a file of unknown type";
  }
}

std::string refused_message(const std::string& shown, const std::string& what) {
  return shown + ": " + what + "; submissions may hold only regular files and directories";
}

Dir Dir::open_root(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    throw FileError(path + (err == ENOTDIR ? std::string(": not a directory") : ": cannot open: " + errno_text(err)));
  }
  return Dir(std::move(fd), "");
}

Entry Dir::stat_entry(const std::string& name) const {
  struct stat st {};
  if (::fstatat(fd_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    throw FileError(shown(name) + ": cannot inspect: " + errno_text(errno));
  Entry e;
  e.name = name;
  e.type = st.st_mode & S_IFMT;
  e.links = st.st_nlink;
  e.size = static_cast<uint64_t>(st.st_size);
  if (e.type == S_IFLNK) {
    char buf[4096];
    const ssize_t n = ::readlinkat(fd_.get(), name.c_str(), buf, sizeof buf);
    if (n < 0) {
      e.link_target = "?";
    } else {
      e.link_target.assign(buf, std::min(static_cast<size_t>(n), kShownTargetChars));
      if (static_cast<size_t>(n) > kShownTargetChars) e.link_target += "...";
    }
  }
  return e;
}

Dir Dir::open_folder(const std::string& name) const {
  UniqueFd fd(::openat(fd_.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    const std::string what = refusal(stat_entry(name));
    if (!what.empty()) throw FileError(refused_message(shown(name), what));
    if (err == ENOTDIR) throw FileError(shown(name) + ": not a directory");
    throw FileError(shown(name) + ": cannot open: " + errno_text(err));
  }
  return Dir(std::move(fd), shown(name));
}

std::vector<Entry> Dir::list(size_t max_entries) const {
  // fdopendir takes the fd it is given: hand it a duplicate, so this Dir keeps its own.
  const int dup = ::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0);
  if (dup < 0) throw FileError((shown_.empty() ? "." : shown_) + ": cannot list: " + errno_text(errno));
  std::unique_ptr<DIR, DirCloser> d(::fdopendir(dup));
  if (!d) {
    const int err = errno;
    ::close(dup);
    throw FileError((shown_.empty() ? "." : shown_) + ": cannot list: " + errno_text(err));
  }
  ::rewinddir(d.get());
  std::vector<std::string> names;
  while (true) {
    errno = 0;
    const dirent* de = ::readdir(d.get());
    if (!de) {
      if (errno != 0) throw FileError((shown_.empty() ? "." : shown_) + ": cannot list: " + errno_text(errno));
      break;
    }
    const std::string name = de->d_name;
    if (name == "." || name == "..") continue;
    if (names.size() == max_entries)
      throw FileError((shown_.empty() ? "." : shown_) + ": more than " + std::to_string(max_entries) + " entries");
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::vector<Entry> out;
  out.reserve(names.size());
  for (const auto& n : names) out.push_back(stat_entry(n));
  return out;
}

std::string Dir::read(const std::string& name, uint64_t max_bytes, const std::string& limit) const {
  // Classified before it is opened: opening a device or a FIFO can itself have effects.
  if (std::string what = refusal(stat_entry(name)); !what.empty()) throw FileError(refused_message(shown(name), what));
  UniqueFd fd(::openat(fd_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ELOOP) throw FileError(refused_message(shown(name), "a symbolic link"));
    throw FileError(shown(name) + ": cannot open: " + errno_text(err));
  }
  // What was opened is judged again from the fd: the entry may have been swapped meanwhile.
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw FileError(shown(name) + ": cannot inspect: " + errno_text(errno));
  Entry opened;
  opened.name = name;
  opened.type = st.st_mode & S_IFMT;
  opened.links = st.st_nlink;
  if (opened.type == S_IFDIR) throw FileError(shown(name) + ": a directory, not a file");
  if (std::string what = refusal(opened); !what.empty()) throw FileError(refused_message(shown(name), what));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) throw FileError(shown(name) + ": " + std::to_string(size) + " bytes, over the " + limit);
  // One byte more than fstat said, to notice a file that grows while it is read.
  std::string bytes(static_cast<size_t>(size) + 1, '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd.get(), &bytes[got], bytes.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw FileError(shown(name) + ": cannot read: " + errno_text(errno));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > size) throw FileError(shown(name) + ": changed while it was read (grew past its size of " + std::to_string(size) + " bytes)");
  bytes.resize(got);
  return bytes;
}

}  // namespace kg::loader::submission

// Reading a submission without following anything it planted (docs/submissions.md, "What a
// submission may hold"). The supervisor reads submissions unsandboxed: every folder is opened
// relative to its parent's fd with O_NOFOLLOW, every entry is classified by lstat, and a file is
// read only from the fd it was opened as, after fstat says it is a regular file with one link
// and a size within the limit.
#pragma once

#include "kernelgate/unique_fd.h"

#include <sys/stat.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kg::loader::submission {

// A path of the submission that is refused or cannot be read; what() names it and the problem.
struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One directory entry as lstat sees it (a symbolic link is the link, not its target).
struct Entry {
  std::string name;
  mode_t type = 0;  // the S_IFMT bits
  nlink_t links = 0;
  uint64_t size = 0;
  std::string link_target;  // for a symbolic link: what it points to (truncated), never followed
};

// What is wrong with an entry under the policy ("a symbolic link (to /etc/shadow)", "a FIFO",
// "a regular file with 2 hard links"), or "" for a directory or a regular file with one link.
std::string refusal(const Entry& e);
// "<shown>: <what>; submissions may hold only regular files and directories"
std::string refused_message(const std::string& shown, const std::string& what);

class Dir {
 public:
  // The submission root as the operator named it: a symbolic link here is followed.
  static Dir open_root(const std::string& path);
  // The folder `name` inside this one; throws FileError unless it is a real directory.
  Dir open_folder(const std::string& name) const;
  // Every entry but "." and "..", sorted by name; throws FileError past `max_entries`.
  std::vector<Entry> list(size_t max_entries = 65536) const;
  // The bytes of the regular file `name`, read from the one fd it was opened as (never a link,
  // FIFO or device, never a file with more than one link). Its size is checked against
  // `max_bytes` before anything is read; `limit` says what the limit is in the error.
  std::string read(const std::string& name, uint64_t max_bytes, const std::string& limit) const;
  // This directory's path relative to the submission root, as errors show it ("" for the root).
  const std::string& shown() const { return shown_; }
  std::string shown(const std::string& name) const { return shown_.empty() ? name : shown_ + "/" + name; }

 private:
  Dir(UniqueFd fd, std::string shown) : fd_(std::move(fd)), shown_(std::move(shown)) {}
  Entry stat_entry(const std::string& name) const;
  UniqueFd fd_;
  std::string shown_;
};

}  // namespace kg::loader::submission

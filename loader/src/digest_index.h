// The supervisor's record of what it put in the cache: for each entry (a published artifact
// folder, the precompiled prelude, the cuda host prefix, the nvcc dry run) the SHA-256 of every
// file, kept in an index folder that no sandbox box ever binds (compile_spec refuses a writable
// bind that contains one). An entry is used only when its folder holds exactly the recorded
// files with the recorded digests: bytes written into an entry by anyone else, or a MANIFEST
// rewritten to match them, do not count.
//
//   <index>/<name>    "kernelgate-index 2", "bytes <n>", then "file <sha256> <identity> <relative path>"
//                     lines (identity: dev:ino:size:mtime:ctime as lstat gave them when hashed);
//                     its mtime is when the entry was last used (the LRU order of eviction)
//   <index>/.lock     flock()ed while an entry is published or evicted
#pragma once

#include "kernelgate/unique_fd.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kg::loader::digest_index {

struct Listing {
  std::vector<std::pair<std::string, std::string>> files;  // relative path -> SHA-256, sorted
  std::vector<std::string> identities;                     // per file (same order): what lstat said when hashed
  uint64_t bytes = 0;                                      // their sizes together
};

// Every file under `dir`, hashed. Throws when it holds a symbolic link, FIFO, device or socket.
// A file that `recorded` (the index's listing) names with the identity it has now (same device,
// inode, size, mtime and ctime) is not read again: its recorded digest stands.
// The prelude is hundreds of MB (1.2 s to hash) and every build checks it.
Listing take(const std::string& dir, const Listing* recorded = nullptr);
// Writes <index_dir>/<name> atomically (temp file + rename). Creates index_dir (private).
void record(const std::string& index_dir, const std::string& name, const Listing& listing);
// "" when `dir` holds exactly what <index_dir>/<name> records, else why not (one line).
std::string check(const std::string& index_dir, const std::string& name, const std::string& dir, Listing* out = nullptr);
// The recorded listing; false when there is none or it cannot be parsed.
bool read(const std::string& index_dir, const std::string& name, Listing* out);
// Marks the entry used now (its LRU position).
void touch(const std::string& index_dir, const std::string& name);
void forget(const std::string& index_dir, const std::string& name);

// Holds <index_dir>/.lock exclusively for its lifetime.
class Lock {
 public:
  explicit Lock(const std::string& index_dir);

 private:
  UniqueFd fd_;
};

// Whether `writable` (a folder about to be bound read-write into a box) is or contains an index
// folder this process has used.
bool reachable_from(const std::string& writable);

}  // namespace kg::loader::digest_index

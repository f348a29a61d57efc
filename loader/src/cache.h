// The content-addressed build cache.
//
//   <cache>/objects/<key>/       one published entry: the artifact files and MANIFEST
//   <cache>/index/<key>          the supervisor's digests of that entry (digest_index.h)
//   <cache>/tmp/<key>.<pid>.<n>/ a build in progress (the compile child's writable folder)
//
// The key is a SHA-256 over everything that changes the artifact (build.cc computes it). An
// entry is published by recording its files' digests in index/ and then renaming its finished
// build folder onto objects/<key>: rename(2) is atomic, so a reader sees a whole entry or none.
// Publishing holds index/.lock, so of two concurrent builds of one key the second finds the
// first's entry and drops its own folder. lookup() re-hashes an entry against index/ (never
// against the MANIFEST stored beside it, which whoever altered the entry could rewrite): a
// truncated, altered or unrecorded entry is removed and rebuilt rather than loaded. The cache
// folders are private (util.h, ensure_private_dir). After a publish, least recently used
// entries are evicted until the cache is within its cap.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kg::loader::cache {

struct Entry {
  std::string dir;                 // objects/<key>
  std::vector<std::string> files;  // names inside dir (MANIFEST aside)
};

// The cache folder: BuildOptions::cache_dir, else cache_root()/builds; it and its objects/,
// index/ and tmp/ are created private and checked (throws naming the folder otherwise).
std::string root(const std::string& configured);
std::string index_dir(const std::string& root);
// A fresh, empty build folder for `key` under tmp/.
std::string make_build_dir(const std::string& root, const std::string& key);
// Finds a valid entry and marks it used. A present entry that does not match the index is
// removed and `*rejected` says why ("" when nothing was rejected).
bool lookup(const std::string& root, const std::string& key, Entry* out, std::string* rejected = nullptr);
// Writes MANIFEST for `files` (names inside build_dir), removes everything else in build_dir,
// records the digests and renames it onto objects/<key>; then evicts least recently used
// entries until the whole cache holds at most `max_bytes` (the new entry is never evicted).
// Returns the entry (the winner's when another build of the same key published first). Throws
// std::runtime_error when nothing could be published.
Entry publish(const std::string& root, const std::string& key, const std::string& build_dir, const std::vector<std::string>& files,
              uint64_t max_bytes);
// Removes least recently used entries (and entries without an index record) until the cache
// holds at most `max_bytes`; never `keep`. Returns the keys evicted, oldest first.
std::vector<std::string> evict(const std::string& root, uint64_t max_bytes, const std::string& keep);
// $KERNELGATE_CACHE_MAX_MB in bytes, else 4 GiB; throws on a value that is not a positive integer.
uint64_t default_max_bytes();

}  // namespace kg::loader::cache

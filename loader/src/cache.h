// The content-addressed build cache.
//
//   <cache>/objects/<key>/       one published entry: the artifact files and MANIFEST
//   <cache>/tmp/<key>.<pid>.<n>/ a build in progress (the compile child's writable folder)
//
// The key is a SHA-256 over everything that changes the artifact (build.cc computes it). An
// entry is published by renaming its finished build folder onto objects/<key>: rename(2) is
// atomic, so a reader sees a whole entry or none, and of two concurrent builds of one key the
// second rename fails harmlessly and its folder is dropped. MANIFEST lists every file with its
// SHA-256; lookup() re-hashes them, so a truncated or altered entry is detected, removed and
// rebuilt rather than loaded.
#pragma once

#include <string>
#include <vector>

namespace kg::loader::cache {

struct Entry {
  std::string dir;                  // objects/<key>
  std::vector<std::string> files;   // names inside dir, as listed in MANIFEST
};

// The cache folder: BuildOptions::cache_dir, else cache_root()/builds.
std::string root(const std::string& configured);
// A fresh, empty build folder for `key` under tmp/.
std::string make_build_dir(const std::string& root, const std::string& key);
// Finds a valid entry. A present but corrupt entry is removed and `*corrupt` set.
bool lookup(const std::string& root, const std::string& key, Entry* out, bool* corrupt = nullptr);
// Writes MANIFEST for `files` (names inside build_dir), removes everything else in build_dir,
// and renames it onto objects/<key>. Returns the entry (the winner's when another build of the
// same key published first). Throws std::runtime_error when nothing could be published.
Entry publish(const std::string& root, const std::string& key, const std::string& build_dir, const std::vector<std::string>& files);

}  // namespace kg::loader::cache

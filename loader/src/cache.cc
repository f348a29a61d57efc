#include "cache.h"

#include "digest_index.h"
#include "util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kg::loader::cache {
namespace {

constexpr const char* kManifestHeader = "kernelgate-cache 2";
constexpr uint64_t kDefaultMaxBytes = uint64_t{4096} << 20;

bool valid_key(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Moves a broken entry out of the way first (so no reader can half-see it), then deletes it.
void discard(const std::string& root, const fs::path& dir) {
  static std::atomic<unsigned> n{0};
  std::error_code ec;
  fs::path trash = fs::path(root) / "tmp" / ("trash." + std::to_string(::getpid()) + "." + std::to_string(n++));
  fs::rename(dir, trash, ec);
  remove_tree(fs::path(ec ? dir : trash).string(), ec);
}

}  // namespace

std::string root(const std::string& configured) {
  std::string r = configured.empty() ? cache_root() + "/builds" : configured;
  for (const std::string& dir : {r, r + "/objects", r + "/index", r + "/tmp"}) ensure_private_dir(dir);
  std::error_code ec;
  // Build folders of builds that died (a killed kernelgate) are swept after a day; a live
  // build is never that old (the compile time limit is minutes).
  static std::atomic<bool> swept{false};
  if (!swept.exchange(true)) {
    const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(24);
    for (const auto& e : fs::directory_iterator(fs::path(r) / "tmp", ec)) {
      std::error_code ec2;
      if (fs::last_write_time(e.path(), ec2) < cutoff && !ec2) remove_tree(fs::path(e.path()).string(), ec2);
    }
  }
  return r;
}

std::string make_build_dir(const std::string& root, const std::string& key) {
  static std::atomic<unsigned> n{0};
  fs::path dir = fs::path(root) / "tmp" / (key.substr(0, 16) + "." + std::to_string(::getpid()) + "." + std::to_string(n++));
  std::error_code ec;
  remove_tree(fs::path(dir).string(), ec);
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir.string() + ": cannot create: " + ec.message());
  return dir.string();
}

std::string index_dir(const std::string& root) { return root + "/index"; }

bool lookup(const std::string& root, const std::string& key, Entry* out, std::string* rejected) {
  if (rejected) rejected->clear();
  if (!valid_key(key)) return false;
  fs::path dir = fs::path(root) / "objects" / key;
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return false;
  digest_index::Listing listing;
  std::string why = S_ISDIR(st.st_mode) ? digest_index::check(index_dir(root), key, dir.string(), &listing) : "not a directory";
  if (why.empty()) {
    Entry e;
    e.dir = dir.string();
    for (const auto& f : listing.files)
      if (f.first != "MANIFEST") e.files.push_back(f.first);
    if (e.files.empty()) why = "no files";
    if (why.empty()) {
      digest_index::touch(index_dir(root), key);
      *out = e;
      return true;
    }
  }
  if (rejected) *rejected = "cache entry " + key.substr(0, 16) + " rejected (" + why + "): removed and rebuilt";
  discard(root, dir);
  return false;
}

Entry publish(const std::string& root, const std::string& key, const std::string& build_dir, const std::vector<std::string>& files,
              uint64_t max_bytes) {
  std::error_code ec;
  // Only the listed files survive: logs, objects and anything the compiler left go.
  for (const auto& e : fs::directory_iterator(build_dir, ec)) {
    std::string name = e.path().filename().string();
    bool keep = false;
    for (const auto& f : files) keep |= f == name;
    if (!keep) remove_tree(fs::path(e.path()).string(), ec);
  }
  for (const auto& f : files)
    if (!fs::is_regular_file(fs::symlink_status(fs::path(build_dir) / f, ec)))
      throw std::runtime_error("build output " + f + " is missing");
  std::ostringstream m;
  m << kManifestHeader << "\nkey " << key << "\n";
  for (const auto& f : files) m << "file " << f << "\n";
  write_file((fs::path(build_dir) / "MANIFEST").string(), m.str());
  // The compile box has exited: these bytes are final, and hashing them needs no lock.
  const digest_index::Listing listing = digest_index::take(build_dir);
  fs::path dest = fs::path(root) / "objects" / key;
  Entry e;
  {
    digest_index::Lock lock(index_dir(root));
    if (lookup(root, key, &e)) {
      // Another build of the same key won the race: use its entry.
      remove_tree(fs::path(build_dir).string(), ec);
      return e;
    }
    digest_index::record(index_dir(root), key, listing);
    fs::rename(build_dir, dest, ec);
    if (ec) {
      digest_index::forget(index_dir(root), key);
      std::error_code ec2;
      remove_tree(fs::path(build_dir).string(), ec2);
      throw std::runtime_error("cannot publish build " + key + " into " + dest.string() + ": " + ec.message());
    }
  }
  e.dir = dest.string();
  e.files = files;
  evict(root, max_bytes, key);
  return e;
}

std::vector<std::string> evict(const std::string& root, uint64_t max_bytes, const std::string& keep) {
  const std::string index = index_dir(root);
  digest_index::Lock lock(index);
  std::error_code ec;
  // Entries without an index record (an older kernelgate's, a half-evicted one) are never loaded: they go.
  for (const auto& e : fs::directory_iterator(fs::path(root) / "objects", ec)) {
    const std::string key = e.path().filename().string();
    std::error_code ec2;
    if (!fs::exists(fs::path(index) / key, ec2)) discard(root, e.path());
  }
  struct Used {
    fs::file_time_type when;
    std::string key;
    uint64_t bytes;
  };
  std::vector<Used> entries;
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(index, ec)) {
    const std::string key = e.path().filename().string();
    if (!valid_key(key)) continue;
    std::error_code ec2;
    digest_index::Listing l;
    if (!fs::is_directory(fs::path(root) / "objects" / key, ec2) || !digest_index::read(index, key, &l)) {
      digest_index::forget(index, key);
      continue;
    }
    entries.push_back({fs::last_write_time(e.path(), ec2), key, l.bytes});
    total += l.bytes;
  }
  std::sort(entries.begin(), entries.end(), [](const Used& a, const Used& b) { return a.when < b.when; });
  std::vector<std::string> evicted;
  for (const auto& u : entries) {
    if (total <= max_bytes) break;
    if (u.key == keep) continue;
    discard(root, fs::path(root) / "objects" / u.key);
    digest_index::forget(index, u.key);
    total -= u.bytes;
    evicted.push_back(u.key);
  }
  return evicted;
}

uint64_t default_max_bytes() {
  const char* v = std::getenv("KERNELGATE_CACHE_MAX_MB");
  if (!v || !*v) return kDefaultMaxBytes;
  char* end = nullptr;
  errno = 0;
  const unsigned long long mb = std::strtoull(v, &end, 10);
  if (errno || *end || mb == 0 || mb > (uint64_t{1} << 40) || *v == '-')
    throw std::runtime_error(std::string("KERNELGATE_CACHE_MAX_MB=") + v + ": not a size in MiB (a positive integer)");
  return static_cast<uint64_t>(mb) << 20;
}

}  // namespace kg::loader::cache

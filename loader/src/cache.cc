#include "cache.h"

#include "sha256.h"
#include "util.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kg::loader::cache {
namespace {

constexpr const char* kManifestHeader = "kernelgate-cache 1";

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
  std::error_code ec;
  fs::create_directories(fs::path(r) / "objects", ec);
  fs::create_directories(fs::path(r) / "tmp", ec);
  if (ec) throw std::runtime_error(r + ": cannot create the build cache: " + ec.message());
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

bool lookup(const std::string& root, const std::string& key, Entry* out, bool* corrupt) {
  if (corrupt) *corrupt = false;
  if (!valid_key(key)) return false;
  fs::path dir = fs::path(root) / "objects" / key;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  auto broken = [&]() {
    if (corrupt) *corrupt = true;
    discard(root, dir);
    return false;
  };
  std::ifstream m(dir / "MANIFEST");
  std::string line;
  if (!m || !std::getline(m, line) || line != kManifestHeader) return broken();
  if (!std::getline(m, line) || line != "key " + key) return broken();
  Entry e;
  e.dir = dir.string();
  while (std::getline(m, line)) {
    if (line.empty()) continue;
    // "file <sha256> <name>"
    std::istringstream in(line);
    std::string word, hash, name;
    if (!(in >> word >> hash >> name) || word != "file" || name.find('/') != std::string::npos || name == "..") return broken();
    if (sha256_file((dir / name).string()) != hash) return broken();
    e.files.push_back(name);
  }
  if (e.files.empty()) return broken();
  *out = e;
  return true;
}

Entry publish(const std::string& root, const std::string& key, const std::string& build_dir, const std::vector<std::string>& files) {
  std::error_code ec;
  // Only the listed files survive: logs, objects and anything the compiler left go.
  for (const auto& e : fs::directory_iterator(build_dir, ec)) {
    std::string name = e.path().filename().string();
    bool keep = false;
    for (const auto& f : files) keep |= f == name;
    if (!keep) remove_tree(fs::path(e.path()).string(), ec);
  }
  std::ostringstream m;
  m << kManifestHeader << "\nkey " << key << "\n";
  for (const auto& f : files) {
    std::string h = sha256_file((fs::path(build_dir) / f).string());
    if (h.empty()) throw std::runtime_error("build output " + f + " is missing");
    m << "file " << h << " " << f << "\n";
  }
  write_file((fs::path(build_dir) / "MANIFEST").string(), m.str());
  fs::path dest = fs::path(root) / "objects" / key;
  fs::rename(build_dir, dest, ec);
  if (ec) {
    // Another build of the same key won the race (use its entry), or a corrupt entry sat there
    // (lookup() has removed it: try once more).
    Entry e;
    if (lookup(root, key, &e)) {
      remove_tree(fs::path(build_dir).string(), ec);
      return e;
    }
    std::error_code ec2;
    fs::rename(build_dir, dest, ec2);
    if (ec2) {
      remove_tree(fs::path(build_dir).string(), ec);
      throw std::runtime_error("cannot publish build " + key + " into " + dest.string() + ": " + ec2.message());
    }
  }
  Entry e;
  e.dir = dest.string();
  e.files = files;
  return e;
}

}  // namespace kg::loader::cache

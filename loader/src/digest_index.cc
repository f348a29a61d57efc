#include "digest_index.h"

#include "kernelgate/sha256.h"
#include "util.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace fs = std::filesystem;

namespace kg::loader::digest_index {
namespace {

constexpr const char* kHeader = "kernelgate-index 2";

std::mutex g_mu;
std::set<std::string> g_index_dirs;  // every index folder this process used
using Identity = std::tuple<dev_t, ino_t, off_t, long, long, long, long>;

Identity identity_of(const struct stat& st) {
  return {st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec};
}

// "dev:ino:size:mtime_s:mtime_ns:ctime_s:ctime_ns", as the index records it.
std::string identity_text(const struct stat& st) {
  const Identity id = identity_of(st);
  std::ostringstream o;
  o << std::get<0>(id) << ':' << std::get<1>(id) << ':' << std::get<2>(id) << ':' << std::get<3>(id) << ':' << std::get<4>(id) << ':'
    << std::get<5>(id) << ':' << std::get<6>(id);
  return o.str();
}

void remember(const std::string& index_dir) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_index_dirs.insert(fs::path(index_dir).lexically_normal().string());
}

std::string digest(const std::string& path, const struct stat& before) {
  std::string h = digest::sha256_file(path);
  struct stat after {};
  if (h.empty() || ::lstat(path.c_str(), &after) != 0) throw std::runtime_error(path + ": cannot read");
  if (identity_of(after) != identity_of(before)) throw std::runtime_error(path + ": changed while it was hashed");
  return h;
}

// The listing's files in path order, each keeping its identity.
Listing sorted_by_path(Listing l) {
  std::vector<size_t> order(l.files.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return l.files[a] < l.files[b]; });
  Listing sorted;
  sorted.bytes = l.bytes;
  for (size_t i : order) {
    sorted.files.push_back(l.files[i]);
    sorted.identities.push_back(i < l.identities.size() ? l.identities[i] : "-");
  }
  return sorted;
}

// A file name for a message: whatever planted it chose its bytes.
std::string shown(const std::string& name) {
  std::string out = name.substr(0, 200);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return out;
}

}  // namespace

Listing take(const std::string& dir, const Listing* recorded) {
  Listing out;
  std::map<std::string, std::pair<std::string, std::string>> known;  // path -> (identity, hash)
  if (recorded)
    for (size_t i = 0; i < recorded->files.size() && i < recorded->identities.size(); ++i)
      known[recorded->files[i].first] = {recorded->identities[i], recorded->files[i].second};
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string path = it->path().string();
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) throw std::runtime_error(path + ": cannot stat: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) continue;
    if (!S_ISREG(st.st_mode)) throw std::runtime_error(path + ": not a regular file (a link, FIFO, device or socket)");
    const std::string rel = it->path().lexically_relative(dir).string(), id = identity_text(st);
    // The file the index recorded, not written since (any write, chmod, rename or replacement
    // changes its ctime, which no one but root can set back): its recorded digest stands.
    auto k = known.find(rel);
    out.files.push_back({rel, k != known.end() && k->second.first == id ? k->second.second : digest(path, st)});
    out.identities.push_back(id);
    out.bytes += static_cast<uint64_t>(st.st_size);
  }
  if (ec) throw std::runtime_error(dir + ": cannot list: " + ec.message());
  return sorted_by_path(std::move(out));
}

void record(const std::string& index_dir, const std::string& name, const Listing& listing) {
  remember(index_dir);
  ensure_private_dir(index_dir);
  std::ostringstream text;
  text << kHeader << "\nbytes " << listing.bytes << "\n";
  for (size_t i = 0; i < listing.files.size(); ++i)
    text << "file " << listing.files[i].second << " " << (i < listing.identities.size() ? listing.identities[i] : "-") << " "
         << listing.files[i].first << "\n";
  static std::atomic<unsigned> n{0};
  const std::string final_path = index_dir + "/" + name;
  const std::string part = final_path + ".part" + std::to_string(::getpid()) + "." + std::to_string(n++);
  write_file(part, text.str());
  if (::rename(part.c_str(), final_path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(part.c_str());
    throw std::runtime_error(final_path + ": cannot write the cache index: " + why);
  }
}

bool read(const std::string& index_dir, const std::string& name, Listing* out) {
  remember(index_dir);
  std::string text;
  if (!read_file(index_dir + "/" + name, &text)) return false;
  std::istringstream in(text);
  std::string line, word;
  if (!std::getline(in, line) || line != kHeader) return false;
  if (!std::getline(in, line)) return false;
  std::istringstream bytes(line);
  Listing l;
  if (!(bytes >> word >> l.bytes) || word != "bytes") return false;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    // "file <sha256> <identity> <relative path>": the path is the rest of the line
    if (line.rfind("file ", 0) != 0 || line.size() < 5 + 64 + 2 || line[5 + 64] != ' ') return false;
    const size_t id_end = line.find(' ', 5 + 64 + 1);
    if (id_end == std::string::npos || id_end + 1 >= line.size()) return false;
    l.files.push_back({line.substr(id_end + 1), line.substr(5, 64)});
    l.identities.push_back(line.substr(5 + 64 + 1, id_end - (5 + 64 + 1)));
  }
  l = sorted_by_path(std::move(l));
  *out = std::move(l);
  return true;
}

std::string check(const std::string& index_dir, const std::string& name, const std::string& dir, Listing* out) {
  Listing want;
  if (!read(index_dir, name, &want)) return "no index entry recorded by kernelgate for it";
  Listing have;
  try {
    have = take(dir, &want);
  } catch (const std::exception& e) { return shown(e.what()); }
  std::map<std::string, std::string> recorded(want.files.begin(), want.files.end());
  for (const auto& [file, hash] : have.files) {
    auto it = recorded.find(file);
    if (it == recorded.end()) return shown(file) + " is not in the index";
    if (it->second != hash) return shown(file) + " does not match its recorded digest";
    recorded.erase(it);
  }
  if (!recorded.empty()) return shown(recorded.begin()->first) + " is missing";
  if (out) *out = std::move(have);
  return "";
}

void touch(const std::string& index_dir, const std::string& name) {
  ::utimensat(AT_FDCWD, (index_dir + "/" + name).c_str(), nullptr, 0);  // best effort: only the LRU order depends on it
}

void forget(const std::string& index_dir, const std::string& name) { ::unlink((index_dir + "/" + name).c_str()); }

Lock::Lock(const std::string& index_dir) {
  remember(index_dir);
  ensure_private_dir(index_dir);
  const std::string path = index_dir + "/.lock";
  fd_ = UniqueFd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (fd_.get() < 0) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  while (::flock(fd_.get(), LOCK_EX) != 0)
    if (errno != EINTR) throw std::runtime_error(path + ": cannot lock: " + std::strerror(errno));
}

bool reachable_from(const std::string& writable) {
  const std::string w = fs::path(writable).lexically_normal().string();
  std::lock_guard<std::mutex> lock(g_mu);
  for (const auto& idx : g_index_dirs)
    if (idx == w || (idx.size() > w.size() && idx.compare(0, w.size(), w) == 0 && (w.back() == '/' || idx[w.size()] == '/'))) return true;
  return false;
}

}  // namespace kg::loader::digest_index

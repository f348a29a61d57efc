#include "util.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace kg::loader {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  for (std::string& w : split(s, ' '))
    if (!w.empty()) out.push_back(std::move(w));
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

std::string sh_quote(const std::string& s) { return "'" + replace_all(s, "'", "'\\''") + "'"; }

std::string cpp_string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f && c != '?') {  // '?': no trigraph can form
      out += static_cast<char>(c);
    } else {
      // Octal, always three digits: a following digit cannot extend the escape (\x would).
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    }
  }
  return out + "\"";
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
  f << content;
  if (!f) throw std::runtime_error(path + ": write failed");
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  if (!f) return false;
  *out = ss.str();
  return true;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void ensure_private_dir(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) throw std::runtime_error(path + ": cannot create the cache's parent folder: " + ec.message());
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::runtime_error(path + ": cannot create cache directory: " + std::strerror(errno));
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) throw std::runtime_error(path + ": cannot stat cache directory: " + std::strerror(errno));
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  const std::string remedy =
      "; kernelgate refuses a cache others could plant artifacts in: remove it or set KERNELGATE_CACHE=<a directory of your own>";
  if (S_ISLNK(st.st_mode)) throw std::runtime_error(path + ": the cache directory is a symbolic link" + remedy);
  if (!S_ISDIR(st.st_mode)) throw std::runtime_error(path + ": the cache directory is not a directory" + remedy);
  if (st.st_uid != ::geteuid())
    throw std::runtime_error(path + ": the cache directory is owned by uid " + std::to_string(st.st_uid) + " (mode " + mode +
                             "), not by the running user (uid " + std::to_string(::geteuid()) + ")" + remedy);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    throw std::runtime_error(path + ": the cache directory has mode " + mode + ", writable by group or others" + remedy);
}

std::string cache_root() {
  std::string root;
  if (const char* c = std::getenv("KERNELGATE_CACHE"); c && *c) root = c;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) root = std::string(x) + "/kernelgate";
  else if (const char* h = std::getenv("HOME"); h && *h) root = std::string(h) + "/.cache/kernelgate";
  else root = "/tmp/kernelgate-cache-" + std::to_string(::geteuid());
  // Build folders are bound into the compile sandbox, which takes only absolute, clean paths
  // (KERNELGATE_CACHE=build/cache is a natural thing to write).
  std::error_code ec;
  const std::filesystem::path clean = std::filesystem::absolute(root, ec).lexically_normal();
  if (ec) throw std::runtime_error(root + ": cannot resolve cache directory: " + ec.message());
  std::string out = clean.string();
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  ensure_private_dir(out);
  return out;
}

namespace {
thread_local int g_remove_errno = 0;  // nftw's callback takes no context; the service removes trees from several threads
int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  if (::remove(path) != 0 && errno != ENOENT && g_remove_errno == 0) g_remove_errno = errno;
  return 0;
}
}  // namespace

void remove_tree(const std::string& path, std::error_code& ec) {
  ec.clear();
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;  // nothing there
  g_remove_errno = 0;
  if (::nftw(path.c_str(), remove_entry, 32, FTW_DEPTH | FTW_PHYS) != 0 && g_remove_errno == 0) g_remove_errno = errno;
  if (g_remove_errno) ec = std::error_code(g_remove_errno, std::generic_category());
}

}  // namespace kg::loader

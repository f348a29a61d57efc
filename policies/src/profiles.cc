// Finding profiles: the shipped directory, the names in it, and reading a profile by name or
// path (with its `base` chain).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "kernelgate/operator_files.h"
#include "policy_internal.h"

#ifndef KG_POLICY_DIR
#error "KG_POLICY_DIR must be defined by the build (policies/CMakeLists.txt)"
#endif

namespace kg::policy {
namespace {

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && s.compare(s.size() - 5, 5, ".toml") == 0);
}

std::string dirname(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// One spelling per file, so a `base` cycle is recognised however the path was written.
std::string canonical(const std::string& path) {
  char* r = ::realpath(path.c_str(), nullptr);
  if (!r) return path;
  std::string s = r;
  std::free(r);
  return s;
}

// A policy file: a regular file of at most kMaxPolicyBytes (operator_files.h).
std::string read_file(const std::string& path) {
  try {
    return read_operator_file(path, kMaxPolicyBytes, "policy file");
  } catch (const PolicyError&) { throw; } catch (const std::runtime_error& e) {
    throw PolicyError(e.what());
  }
}

}  // namespace

std::string profile_dir() {
  const char* env = std::getenv("KERNELGATE_POLICY_DIR");
  if (env && *env) return env;
  return KG_POLICY_DIR;
}

std::vector<std::string> profile_names() {
  std::vector<std::string> names;
  const std::string dir = profile_dir();
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  while (dirent* e = ::readdir(d)) {
    std::string f = e->d_name;
    if (f.size() > 5 && f.compare(f.size() - 5, 5, ".toml") == 0 && f[0] != '.') names.push_back(f.substr(0, f.size() - 5));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Policy load(const std::string& name_or_file) {
  std::vector<std::string> chain;
  return detail::load(name_or_file, "", chain);
}

namespace detail {

Policy load(const std::string& name_or_file, const std::string& relative_to, std::vector<std::string>& chain) {
  std::string path;
  const std::string what = name_or_file.empty() ? std::string(kDefaultProfile) : name_or_file;
  if (looks_like_path(what)) {
    // A relative path in a `base` key is relative to the file that names it.
    path = (what[0] == '/' || relative_to.empty() || dirname(relative_to).empty()) ? what : dirname(relative_to) + "/" + what;
  } else {
    path = profile_dir() + "/" + what + ".toml";
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      const auto names = profile_names();
      std::string list;
      for (size_t i = 0; i < names.size(); ++i) list += (i ? ", " : "") + names[i];
      throw PolicyError("no policy profile named \"" + what + "\" in " + profile_dir() +
                        (list.empty() ? " (the directory has no profiles)" : "; profiles: " + list) +
                        "; a file path must contain '/' or end in .toml");
    }
  }
  const std::string id = canonical(path);
  if (std::find(chain.begin(), chain.end(), id) != chain.end()) {
    std::string cycle;
    for (const auto& c : chain) cycle += c + " -> ";
    throw PolicyError(path + ": `base` cycle: " + cycle + id);
  }
  if (chain.size() >= 16) throw PolicyError(path + ": `base` chain deeper than 16 files");
  std::string text;
  try {
    text = read_file(path);
  } catch (const PolicyError& e) {
    // "competition.toml" is read as a path; say so when a shipped profile has that name.
    const std::string s = detail::stem(what);
    const auto names = profile_names();
    if (s != what && std::find(names.begin(), names.end(), s) != names.end())
      throw PolicyError(std::string(e.what()) + " (for the shipped profile, write \"" + s + "\")");
    throw;
  }
  chain.push_back(id);
  Policy p = detail::parse(text, path, chain);
  chain.pop_back();
  return p;
}

}  // namespace detail
}  // namespace kg::policy

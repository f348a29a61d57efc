#include "build_includes.h"

#include "util.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace kg::loader::includes {
namespace {

// The name inside `#include <name>` on this line (after white space), "" when it is not one.
std::string angle_include_of(const std::string& line) {
  std::string t = trim(line);
  if (t.empty() || t[0] != '#') return "";
  t = trim(t.substr(1));
  if (t.rfind("include", 0) != 0) return "";
  t = trim(t.substr(7));
  if (t.empty() || t[0] != '<') return "";
  const size_t close = t.find('>');
  if (close == std::string::npos) return "";
  const std::string rest = trim(t.substr(close + 1));
  if (!rest.empty() && rest.rfind("//", 0) != 0) return "";
  return t.substr(1, close - 1);
}

// A header that defines nothing a torch header reads: the C and C++ standard library, the CUDA
// runtime's, and torch's own.
bool benign_header(const std::string& name) {
  for (const char* dir : {"ATen/", "c10/", "torch/"})
    if (name.rfind(dir, 0) == 0) return true;
  for (const char* h : {"cuda.h", "cuda_runtime.h", "cuda_runtime_api.h", "cuda_fp16.h", "cuda_bf16.h"})
    if (name == h) return true;
  if (name.find('/') != std::string::npos) return false;
  if (name.find('.') == std::string::npos) return true;  // <vector>, <cstdint>
  // <stdint.h>, <math.h>: the C library
  return name.size() > 2 && name.compare(name.size() - 2, 2, ".h") == 0 &&
         std::all_of(name.begin(), name.end() - 2, [](char c) { return std::islower(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

std::vector<std::string> angle_includes(const std::string& source) {
  std::vector<std::string> out;
  std::istringstream in(source);
  std::string line;
  while (std::getline(in, line)) {
    const std::string name = angle_include_of(line);
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

std::vector<std::string> leading_includes(const std::string& source, const std::vector<std::string>& hoistable) {
  std::vector<std::string> out;
  std::istringstream in(source);
  std::string line;
  bool in_comment = false;
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (in_comment) {
      const size_t end = t.find("*/");
      if (end == std::string::npos) continue;
      in_comment = false;
      t = trim(t.substr(end + 2));
    }
    if (t.rfind("/*", 0) == 0) {
      const size_t end = t.find("*/", 2);
      if (end == std::string::npos) {
        in_comment = true;
        continue;
      }
      t = trim(t.substr(end + 2));
    }
    if (t.empty() || t.rfind("//", 0) == 0 || t == "#pragma once") continue;
    if (t.back() == '\\') break;  // a continued line: not a plain include
    const std::string name = angle_include_of(t);
    if (name.empty() || !benign_header(name)) break;
    if (std::find(hoistable.begin(), hoistable.end(), name) != hoistable.end() && std::find(out.begin(), out.end(), name) == out.end())
      out.push_back(name);
  }
  return out;
}

std::vector<std::string> include_names(const std::vector<std::string>& paths, const std::vector<std::string>& roots) {
  std::set<std::string> names;
  for (const auto& path : paths) {
    for (const auto& root : roots)
      if (!root.empty() && path.rfind(root + "/", 0) == 0) names.insert(path.substr(root.size() + 1));
    // After the first and after the last "/include/" (torch's C++ API has one inside another).
    const size_t first = path.find("/include/"), last = path.rfind("/include/");
    for (size_t at : {first, last}) {
      if (at == std::string::npos) continue;
      std::string name = path.substr(at + 9);
      names.insert(name);
      // libstdc++: include/c++/<version>/[<triple>/]name, include/<triple>/c++/<version>/name
      const size_t cxx = name.find("c++/");
      if (cxx != 0 && (cxx == std::string::npos || name.substr(0, cxx).find("-linux") == std::string::npos ||
                       name.substr(0, cxx - 1).find('/') != std::string::npos))
        continue;
      const size_t v = name.find('/', cxx + 4);
      if (v == std::string::npos) continue;
      name = name.substr(v + 1);
      const size_t t = name.find('/');
      if (t != std::string::npos && name.substr(0, t).find("-linux") != std::string::npos) names.insert(name.substr(t + 1));
      names.insert(name);
    }
  }
  return {names.begin(), names.end()};
}

std::string coverage_note(const std::vector<std::string>& wanted, const std::vector<std::string>& covered, const std::string& what) {
  std::string in, out;
  for (const auto& name : wanted) (std::binary_search(covered.begin(), covered.end(), name) ? in : out) += (std::string(" <") + name + ">");
  if (!out.empty()) return "outside the precompiled headers:" + out + " (compiled with every build; the " + what + " covers the rest)";
  return "precompiled headers: the " + what + " covers every header the source includes" + (in.empty() ? "" : " (" + trim(in) + ")");
}

std::vector<std::string> read_covered(const std::string& dir) {
  // Read once per file version: every build's plan asks, cache hits included.
  static std::mutex mu;
  static std::map<std::string, std::pair<std::string, std::vector<std::string>>> seen;  // path -> (identity, names)
  const std::string path = dir + "/" + kCoveredFile;
  struct stat st {};
  if (dir.empty() || ::stat(path.c_str(), &st) != 0) return {};
  const std::string identity = std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) +
                               "." + std::to_string(st.st_mtim.tv_nsec);
  std::lock_guard<std::mutex> lock(mu);
  auto hit = seen.find(path);
  if (hit != seen.end() && hit->second.first == identity) return hit->second.second;
  std::string text;
  std::vector<std::string> out;
  if (!read_file(path, &text)) return out;
  for (const auto& name : split(text, '\n'))
    if (!name.empty()) out.push_back(name);
  std::sort(out.begin(), out.end());
  seen[path] = {identity, out};
  return out;
}

}  // namespace kg::loader::includes

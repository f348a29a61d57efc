// The submissions of a batch: a folder's directories, or a list file's paths (engine.h).
#include "kernelgate/engine.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kg::engine {

std::vector<Submission> submissions_in(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot read the batch folder: " + ec.message());
  std::vector<Submission> out;
  for (const fs::directory_entry& e : it) {
    std::error_code type_ec;
    if (!e.is_directory(type_ec)) continue;  // follows a link: a submission may be one
    out.push_back({e.path().filename().string(), fs::absolute(e.path()).lexically_normal().string()});
  }
  if (out.empty()) throw std::runtime_error(dir + ": the batch folder holds no submission directories");
  std::sort(out.begin(), out.end(), [](const Submission& a, const Submission& b) { return a.name < b.name; });
  return out;
}

namespace {

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

}  // namespace

std::vector<Submission> submissions_listed(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file + ": cannot read the batch list");
  const fs::path base = fs::absolute(file).parent_path();
  std::vector<Submission> out;
  std::set<std::string> used;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string path = trimmed(line);
    if (path.empty() || path[0] == '#') continue;
    const fs::path p = fs::path(path).is_absolute() ? fs::path(path) : base / path;
    std::error_code ec;
    if (!fs::is_directory(p, ec))
      throw std::runtime_error(file + ":" + std::to_string(n) + ": " + path + " is not a submission directory" +
                               (ec ? " (" + ec.message() + ")" : ""));
    std::string name = p.lexically_normal().filename().string();
    if (name.empty()) name = p.lexically_normal().parent_path().filename().string();
    if (name.empty() || name == "." || name == "..") name = "submission";
    std::string unique = name;
    for (int k = 2; !used.insert(unique).second; ++k) unique = name + "-" + std::to_string(k);
    name = unique;
    out.push_back({name, p.lexically_normal().string()});
  }
  if (out.empty()) throw std::runtime_error(file + ": the batch list names no submission");
  return out;
}

}  // namespace kg::engine

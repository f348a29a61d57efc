// Which solution is judged against which problem: see kernelbench.h.
#include "kernelgate/kernelbench.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kg::kernelbench {
namespace {

fs::path existing(const std::string& path, const char* what) {
  std::error_code ec;
  const fs::path p = fs::canonical(path, ec);
  if (ec) throw std::runtime_error(std::string(what) + " " + path + ": " + ec.message());
  return p;
}

void want_python_file(const fs::path& p, const char* what) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) throw std::runtime_error(std::string(what) + " " + p.string() + ": not a regular file");
  if (p.extension() != ".py") throw std::runtime_error(std::string(what) + " " + p.string() + ": not a .py file");
}

std::vector<fs::path> python_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::error_code ec;
    if (e.is_regular_file(ec) && e.path().extension() == ".py" && e.path().filename().string()[0] != '.') out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// KernelBench's problem number: the digits a problem's file name starts with ("19_ReLU.py"), or
// those after "problem_" in a generated solution's ("level_1_problem_19_sample_0_kernel.py").
std::string problem_number(const std::string& file, bool solution) {
  static const std::regex problem(R"(^([0-9]+)_.*)"), generated(R"(.*problem_([0-9]+)(_.*)?\.py$)");
  std::smatch m;
  if (std::regex_match(file, m, solution ? generated : problem)) return std::to_string(std::stoll(m[1].str()));
  return "";
}

}  // namespace

std::vector<Pair> pairs(const std::string& problem, const std::string& solution,
                        std::vector<std::pair<std::string, std::string>>* left_out) {
  const fs::path p = existing(problem, "--problem"), s = existing(solution, "the solution");
  std::error_code ec;
  const bool p_dir = fs::is_directory(p, ec), s_dir = fs::is_directory(s, ec);
  if (p_dir != s_dir) throw std::runtime_error("--problem " + problem + " and " + solution + ": two files or two folders, not one of each");
  if (!p_dir) {
    want_python_file(p, "--problem");
    want_python_file(s, "the solution");
    return {Pair{p.stem().string(), p.string(), s.string()}};
  }
  std::map<std::string, std::vector<fs::path>> by_name, by_number;
  for (const fs::path& f : python_files(s)) {
    by_name[f.filename().string()].push_back(f);
    if (const std::string n = problem_number(f.filename().string(), true); !n.empty()) by_number[n].push_back(f);
  }
  std::vector<Pair> out;
  std::map<std::string, bool> used;
  for (const fs::path& f : python_files(p)) {
    const std::string file = f.filename().string();
    std::vector<fs::path> found = by_name.count(file) ? by_name[file] : std::vector<fs::path>{};
    if (found.empty())
      if (const std::string n = problem_number(file, false); !n.empty() && by_number.count(n)) found = by_number[n];
    if (found.size() != 1) {
      if (left_out)
        left_out->push_back({file, found.empty() ? "no solution in " + s.string() + " has its file name or its problem number"
                                                 : std::to_string(found.size()) + " solutions in " + s.string() +
                                                       " carry its problem number: name the one to judge"});
      continue;
    }
    used[found[0].string()] = true;
    out.push_back(Pair{f.stem().string(), f.string(), found[0].string()});
  }
  if (left_out)
    for (const auto& [name, files] : by_name)
      for (const fs::path& f : files)
        if (!used.count(f.string())) left_out->push_back({f.filename().string(), "a solution that matches no problem in " + p.string()});
  return out;
}

}  // namespace kg::kernelbench

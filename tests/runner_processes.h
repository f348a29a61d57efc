// The kg-runner processes a supervisor started, found from outside through /proc (a runner's
// parent is its box's init, whose parent is the supervisor): for tests that kill a runner.
#pragma once

#include <sys/types.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kg::test {

// The parent of `pid`, -1 when it is gone.
inline pid_t parent_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("PPid:", 0) == 0) return static_cast<pid_t>(std::atoi(line.c_str() + 5));
  return -1;
}

// kg-runner processes whose box's init is a child of `supervisor`, by host pid.
inline std::vector<pid_t> runners_of(pid_t supervisor) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec2;
    if (std::filesystem::read_symlink(e.path() / "exe", ec2).filename() != "kg-runner") continue;
    const pid_t pid = std::atoi(name.c_str());
    const pid_t init = parent_of(pid);
    if (init > 0 && parent_of(init) == supervisor) out.push_back(pid);
  }
  return out;
}

}  // namespace kg::test

// Help: every subcommand `kernelgate --help` lists answers `--help` with what it does (its usage),
// at least one example and its exit statuses, and exits 0; so does `kernelgate --help` itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "e2e_util.h"

using namespace kg::e2e;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The commands of `kernelgate --help`: the first word of each line indented by two spaces under "commands:".
std::vector<std::string> listed_commands(const std::string& help) {
  std::vector<std::string> out;
  std::istringstream in(help);
  bool in_list = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "commands:") in_list = true;
    else if (in_list && line.empty()) break;
    else if (in_list && line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ')
      out.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  return out;
}

}  // namespace

TEST(Help, EverySubcommandTeachesUsageAnExampleAndExitStatuses) {
  CommandResult top = run("--help", 30);
  ASSERT_EQ(top.status, 0) << top.output;
  EXPECT_NE(lower(top.output).find("exit status"), std::string::npos) << top.output;
  const std::vector<std::string> commands = listed_commands(top.output);
  ASSERT_GE(commands.size(), 12u) << top.output;
  for (const std::string& cmd : commands) {
    if (cmd == "version") continue;  // prints the version; nothing to teach
    CommandResult r = run(cmd + " --help", 30);
    EXPECT_EQ(r.status, 0) << cmd << ":\n" << r.output;
    const std::string text = lower(r.output);
    EXPECT_NE(text.find("usage: kernelgate " + cmd), std::string::npos) << cmd << ":\n" << r.output;
    EXPECT_NE(text.find("example"), std::string::npos) << cmd << " --help has no example:\n" << r.output;
    EXPECT_NE(text.find("exit status"), std::string::npos) << cmd << " --help names no exit status:\n" << r.output;
    EXPECT_GE(std::count(r.output.begin(), r.output.end(), '\n'), 5) << cmd << ": says too little to teach:\n" << r.output;
  }
}

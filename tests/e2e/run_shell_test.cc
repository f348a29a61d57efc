// The end-to-end tests' command runner: a process left behind holding the command's output ends
// the read after a grace period, named, instead of hanging the test until ctest's limit.
#include <gtest/gtest.h>

#include <cstdlib>

#include "e2e_util.h"

using namespace kg::e2e;

TEST(RunShell, StatusAndOutputOfACommand) {
  const CommandResult r = run_shell("sh -c 'echo out; echo err >&2; exit 3'", 60);
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.output, "out\nerr\n");
  EXPECT_EQ(run_shell("sh -c 'echo err >&2; echo out'", 60, false).output, "out\n");
}

TEST(RunShell, AProcessLeftHoldingTheOutputIsNamedNotWaitedFor) {
  // The command exits at once; the sleep it started in the background keeps its stdout.
  const CommandResult r = run_shell("sh -c 'sleep 61 & echo started'", 60);
  EXPECT_EQ(r.status, -2) << r.output;
  EXPECT_LT(r.seconds, 30) << r.output;
  EXPECT_NE(r.output.find("started\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("still held open by: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(sleep)"), std::string::npos) << r.output;
  (void)std::system("pkill -x -f 'sleep 61'");
  // A background process that closes its output is not a leak.
  const CommandResult quiet = run_shell("sh -c 'sleep 62 >/dev/null 2>&1 & echo started'", 60);
  EXPECT_EQ(quiet.status, 0) << quiet.output;
  EXPECT_LT(quiet.seconds, 5) << quiet.output;
  (void)std::system("pkill -x -f 'sleep 62'");
}

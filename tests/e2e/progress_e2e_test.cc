// Progress: the evaluating commands' progress line through the real kernelgate binary. On a
// terminal (a pseudo-terminal made by script(1)) stderr gets a line rewritten in place with the ops
// done of their total, the op and an estimate; in a pipe or a log nothing of it; --quiet prints
// nothing at all; --verbose a line per decided op.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "e2e_util.h"

namespace fs = std::filesystem;
using namespace kg::e2e;

namespace {

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << "missing \"" << (part) << "\" in:\n" << (text)

const std::string kEval = " eval " KG_SOURCE_DIR "/examples/correct --no-timing --seed 1 --out ";

}  // namespace

TEST(Progress, TerminalGetsALiveLineWithOpsDoneAndTotal) {
  fs::path d = temp_dir("progress-tty");
  // script runs the command on a pseudo-terminal and copies what it wrote to our stdout.
  CommandResult r = run_shell("script -qec 'TERM=xterm " KG_BINARY + kEval + d.string() + "' /dev/null", 600);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_CONTAINS(r.output, "\r[0/7 ops]");
  EXPECT_CONTAINS(r.output, ": samples ");
  EXPECT_CONTAINS(r.output, "\r[4/7 ops]");
  EXPECT_CONTAINS(r.output, "\r\033[K");  // cleared before the table
  EXPECT_CONTAINS(r.output, "results: ");
  fs::remove_all(d);
}

TEST(Progress, PipeGetsNoProgressQuietGetsNothingVerboseGetsLines) {
  fs::path d = temp_dir("progress-pipe");
  CommandResult plain = run(kEval.substr(1) + (d / "plain").string(), 600);
  EXPECT_EQ(plain.status, 0) << plain.output;
  EXPECT_EQ(plain.output.find("ops]"), std::string::npos) << plain.output;
  EXPECT_EQ(plain.output.find('\r'), std::string::npos) << plain.output;
  EXPECT_CONTAINS(plain.output, "relu.default");

  CommandResult quiet = run(kEval.substr(1) + (d / "quiet").string() + " --quiet", 600);
  EXPECT_EQ(quiet.status, 0) << quiet.output;
  EXPECT_EQ(quiet.output, "");
  EXPECT_TRUE(fs::exists(d / "quiet" / "results.json"));

  CommandResult verbose = run(kEval.substr(1) + (d / "verbose").string() + " --verbose", 600);
  EXPECT_EQ(verbose.status, 0) << verbose.output;
  EXPECT_CONTAINS(verbose.output, "kernelgate: evaluating relu.default");
  EXPECT_CONTAINS(verbose.output, "decided (7/7 ops, ");
  fs::remove_all(d);
}

TEST(Progress, BatchLineCountsEveryOpOfTheBatchAndNamesTheSubmission) {
  fs::path d = temp_dir("progress-batch");
  for (const char* name : {"first", "second"}) {
    fs::create_directories(d / "batch" / name);  // copy's target folder must exist
    fs::copy(KG_SOURCE_DIR "/examples/correct", d / "batch" / name, fs::copy_options::recursive);
  }
  CommandResult r = run_shell("script -qec 'TERM=xterm " KG_BINARY " eval --batch " + (d / "batch").string() +
                                  " --no-timing --seed 1 --jobs 2 --out " + (d / "out").string() + "' /dev/null",
                              600);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_CONTAINS(r.output, "/14 ops] first: ");
  EXPECT_CONTAINS(r.output, "/14 ops] second: ");
  EXPECT_CONTAINS(r.output, "\r[14/14 ops]");
  fs::remove_all(d);
}

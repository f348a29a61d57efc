// SuiteReference: the supervisor computes references in its own process, so a sample whose values
// make an aten kernel read or write out of bounds (random LAPACK pivots, bag offsets that do not
// end where the kernel expects) would crash kernelgate itself. Every sample of every suite is run
// through the reference here, one forked child per overload, and a child that dies by a signal
// names its overload.
#include "kernelgate/harness.h"
#include "kernelgate/loader.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

using namespace kg::harness;

namespace {

// Runs every sample of `op` through make_inputs and the reference; exceptions are the reference
// refusing a sample (a skip), not a crash.
void run_op(const std::string& suite, const std::string& op) {
  const auto& schema = kg::loader::aten_schema(op);
  auto samples = suite_samples(suite, op);
  for (size_t i = 0; i < samples.size(); ++i) {
    std::mt19937_64 rng(77 + i);
    try {
      auto args = make_inputs(schema, samples[i], rng);
      call_reference(schema, args);
    } catch (const std::exception&) {}
  }
}

void scan(const std::string& suite) {
  const auto ops = suite_ops(suite);  // loaded before forking: the children only compute
  for (const auto& op : ops) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0) << std::strerror(errno);
    if (pid == 0) {
      run_op(suite, op);
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
      ADD_FAILURE() << suite << ": " << op << " crashed the reference with signal " << WTERMSIG(status) << " ("
                    << strsignal(WTERMSIG(status)) << ")";
    else EXPECT_EQ(WEXITSTATUS(status), 0) << suite << ": " << op;
  }
}

}  // namespace

TEST(SuiteReference, NoEdgeSampleCrashesTheReference) { scan("edge"); }
TEST(SuiteReference, NoOpinfoSampleCrashesTheReference) { scan("opinfo"); }
TEST(SuiteReference, NoTracesSampleCrashesTheReference) { scan("traces"); }

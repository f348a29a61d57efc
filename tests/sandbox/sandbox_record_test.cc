// The record and the names: unit tests that need no sandbox.
#include <gtest/gtest.h>

#include <cstdio>

#include <unistd.h>

#include "cgroup.h"
#include "kernelgate/sandbox.h"

namespace sb = kg::sandbox;

TEST(SandboxRecord, JsonHasEveryKeyAndEscapes) {
  sb::Record r;
  r.status = sb::Status::SV;
  r.syscall = "ptrace";
  r.message = "a \"quoted\"\nline\\ \x01";
  r.cpu_s = 1.5;
  std::string j = r.to_json();
  EXPECT_EQ(j,
            "{\"status\": \"SV\", \"exit_code\": 0, \"signal\": 0, \"syscall\": \"ptrace\", \"cpu_s\": 1.500, "
            "\"wall_s\": 0.000, \"max_rss_kb\": 0, \"message\": \"a \\\"quoted\\\"\\nline\\\\ \\u0001\"}");
}

TEST(SandboxRecord, StatusAndProfileNames) {
  const char* names[] = {"OK", "RE", "SG", "TO", "ML", "OL", "SV", "XX"};
  for (int i = 0; i < 8; ++i) EXPECT_STREQ(sb::status_name(static_cast<sb::Status>(i)), names[i]);
  for (const char* n : {"compile", "run-cpu", "run-cuda"}) {
    sb::Profile p;
    ASSERT_TRUE(sb::parse_profile(n, &p));
    EXPECT_STREQ(sb::profile_name(p), n);
  }
  sb::Profile p;
  EXPECT_FALSE(sb::parse_profile("run", &p));
}

TEST(SandboxRecord, TightenIsRefusedForTheCompileProfile) { EXPECT_FALSE(sb::tighten_runner_filter(sb::Profile::Compile).empty()); }

TEST(SandboxCgroup, LayoutIsReported) {
  std::string layout = kg::sandbox::cgroup::describe_layout();
  std::printf("cgroup layout: %s\n", layout.c_str());
  EXPECT_FALSE(layout.empty());
  if (::geteuid() == 0) {
    auto cg = kg::sandbox::cgroup::Cgroup::create(kg::sandbox::Limits{});
    ASSERT_TRUE(cg != nullptr) << layout;
    EXPECT_TRUE(cg->limits_memory()) << layout;
    EXPECT_TRUE(cg->limits_pids()) << layout;
  }
}

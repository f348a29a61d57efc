// Shared helpers of the attack programs. Every attack prints "RESULT <what> <outcome>" lines and
// exits with kBreached (42) when an attempt that must fail succeeded, 0 when every attempt was
// refused in a way the program could observe. A program that the sandbox kills never exits at all:
// the test reads the record (status, syscall) instead.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernelgate/sandbox.h"

constexpr int kBreached = 42;

inline void result(const std::string& what, const std::string& outcome) {
  std::printf("RESULT %s %s\n", what.c_str(), outcome.c_str());
  std::fflush(stdout);
}

// "ok" when rc < 0, errno's name otherwise.
inline bool refused(const std::string& what, long rc) {
  if (rc < 0) {
    result(what, std::string("refused ") + strerrorname_np(errno));
    return true;
  }
  result(what, "SUCCEEDED");
  return false;
}

// Attacks that play the untrusted side of kg-runner call this first when given "--tighten":
// the second-stage filter goes on exactly as kg-runner installs it.
inline void maybe_tighten(int& argc, char**& argv) {
  if (argc > 1 && std::strcmp(argv[1], "--tighten") == 0) {
    std::string err = kg::sandbox::tighten_runner_filter(kg::sandbox::Profile::RunCpu);
    if (!err.empty()) {
      std::fprintf(stderr, "tighten failed: %s\n", err.c_str());
      std::exit(3);
    }
    argv[1] = argv[0];
    ++argv;
    --argc;
  }
}

// The one piece of the sandbox that runs inside the box: kg-runner's second seccomp stage
// (target kg_sandbox_runner_filter, all that kg-runner links of the sandbox).
#pragma once

#include "kernelgate/sandbox_profile.h"

#include <string>

namespace kg::sandbox {

// Called by kg-runner inside the sandbox right before the first untrusted call: installs the
// tighter filter of the run profiles on every thread (SECCOMP_FILTER_FLAG_TSYNC).
// Returns an empty string on success, else what failed.
std::string tighten_runner_filter(Profile profile);

}  // namespace kg::sandbox

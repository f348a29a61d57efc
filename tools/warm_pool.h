// The runner pool a daemon's worker started before its request came (cmd_daemon.cc), offered to
// the one evaluation that request runs (cmd_eval.cc).
#pragma once

#include "kernelgate/harness.h"
#include "kernelgate/policy.h"

#include <memory>

namespace kg::cli {

void offer_warm_runner_pool(std::shared_ptr<loader::RunnerPool> pool, names::Device device);

// The offered pool, once, when its runners are the ones an evaluation with `options` and `policy`
// would start (same device, runner and limits); null otherwise, and in any process but a worker.
std::shared_ptr<loader::RunnerPool> take_warm_runner_pool(const harness::EvalOptions& options, const policy::Policy& policy);

}  // namespace kg::cli

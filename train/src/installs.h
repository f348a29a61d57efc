// What train-check and grad-check share (private): the submission's ops built for installing over
// aten, and a runner with them installed.
#pragma once

#include "kernelgate/loader.h"
#include "kernelgate/policy.h"
#include "kernelgate/train_check.h"

#include <memory>
#include <string>
#include <vector>

namespace kg::train {

struct Installable {
  loader::OpFolder folder;
  loader::BuildResult built;
};

// Builds every op of `submission` as an evaluation would (the compile sandbox, the cache); each
// op's fate into `shown`. Python ops come first in the result: a runner starts its interpreter
// before its first load tightens the filter.
std::vector<Installable> build_ops(const std::string& submission, names::Device device, const policy::Policy& policy,
                                   const std::string& work, std::vector<InstalledOp>* shown);

// A fresh sandboxed runner as an evaluation starts one for `device` under `policy`, with a staging
// folder of its own under `staging_root`; with `min_wall_s` > 0 its wall-clock limit is at least
// that and its CPU limit at least four times the wall-clock one (torch's threads). Null, with why
// in `*error`, when it cannot be started.
std::unique_ptr<loader::RunnerClient> start_runner(names::Device device, const std::string& runner_path, const policy::Policy& policy,
                                                   const std::string& staging_root, double min_wall_s, std::string* error);

// Stages and installs `ops` over aten in `client` (loads with LoadRequest::install_over_aten).
// A python op whose source defines a torch.autograd.Function goes to the Autograd key, so that its
// own backward is the one autograd runs; any other op below autograd, where aten's derivative
// formula calls the submission's kernels. Returns "" or why one could not be installed.
std::string install_ops(loader::RunnerClient& client, const std::vector<Installable>& ops, loader::Device device);

}  // namespace kg::train

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

// A python op whose source subclasses torch.autograd.Function: installed at the Autograd key, so
// that its own backward is the one autograd runs (any other op is installed below autograd, and
// aten's derivative formula calls the submission's kernels).
bool defines_autograd_function(const Installable& op);

// Stages and installs `ops` over aten in `client` (loads with LoadRequest::install_over_aten).
// Returns "" or why one could not be installed.
std::string install_ops(loader::RunnerClient& client, const std::vector<Installable>& ops, loader::Device device);

}  // namespace kg::train

// What train.json and grad.json share (private, train_json.cc).
#pragma once

#include "kernelgate/train_check.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace kg::train {

// `ops`: each op of the submission, its kind and what became of it.
nlohmann::json installed_ops_json(const std::vector<InstalledOp>& ops);

}  // namespace kg::train

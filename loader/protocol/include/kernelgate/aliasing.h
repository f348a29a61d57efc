// Which argument's storage each return shares: the runner reports it for the submission's last
// call, the supervisor computes it for the reference's, and the two are compared.
#pragma once

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <vector>

namespace kg::protocol {

// Per return: the index of the argument (a tensor, or a tensor list holding one) whose storage
// it shares, kAliasNone, or kAliasNotTensor (not one defined tensor).
std::vector<int32_t> return_aliases(const std::vector<c10::IValue>& returns, const std::vector<c10::IValue>& args);

}  // namespace kg::protocol

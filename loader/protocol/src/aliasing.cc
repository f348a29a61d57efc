#include "kernelgate/aliasing.h"

#include "kernelgate/protocol.h"

#include <ATen/ATen.h>

namespace kg::protocol {
namespace {

const c10::StorageImpl* storage_of(const at::Tensor& t) {
  return t.defined() && t.has_storage() ? t.storage().unsafeGetStorageImpl() : nullptr;
}

}  // namespace

std::vector<int32_t> return_aliases(const std::vector<c10::IValue>& returns, const std::vector<c10::IValue>& args) {
  std::vector<int32_t> out;
  out.reserve(returns.size());
  for (const auto& ret : returns) {
    const c10::StorageImpl* s = ret.isTensor() ? storage_of(ret.toTensor()) : nullptr;
    if (!s) {
      out.push_back(kAliasNotTensor);
      continue;
    }
    int32_t alias = kAliasNone;
    for (size_t a = 0; a < args.size() && alias == kAliasNone; ++a) {
      if (args[a].isTensor() && storage_of(args[a].toTensor()) == s) alias = static_cast<int32_t>(a);
      if (args[a].isTensorList())
        for (const at::Tensor& t : args[a].toTensorList())
          if (storage_of(t) == s) alias = static_cast<int32_t>(a);
    }
    out.push_back(alias);
  }
  return out;
}

}  // namespace kg::protocol

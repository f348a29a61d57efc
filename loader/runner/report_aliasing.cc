// Which argument each return shares storage with: see instrument.h.
#include "instrument.h"
#include "kernelgate/aliasing.h"

namespace kg::runner {

void report_aliasing(const std::vector<c10::IValue>& returns, const std::vector<c10::IValue>& args, protocol::CallResultMsg& r) {
  const std::vector<int32_t> aliases = protocol::return_aliases(returns, args);
  r.n_return_alias = 0;
  for (size_t i = 0; i < aliases.size() && i < protocol::kMaxReturnAlias; ++i) r.return_alias[r.n_return_alias++] = aliases[i];
}

}  // namespace kg::runner

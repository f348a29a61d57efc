#include "aliasing.h"

#include "kernelgate/protocol.h"

namespace kg::harness {
namespace {

// The argument whose annotation is the written alias set of `info`, or -1.
int32_t written_argument(const c10::FunctionSchema& schema, const c10::AliasInfo& info) {
  const auto& args = schema.arguments();
  for (size_t a = 0; a < args.size(); ++a) {
    const c10::AliasInfo* ai = args[a].alias_info();
    if (ai && ai->isWrite() && ai->beforeSets() == info.beforeSets()) return static_cast<int32_t>(a);
  }
  return -1;
}

std::string arg_name(const c10::FunctionSchema& schema, int32_t a) {
  return "argument " + std::to_string(a) + " (" + schema.arguments()[static_cast<size_t>(a)].name() + ")";
}

}  // namespace

std::optional<std::string> aliasing_mismatch(const c10::FunctionSchema& schema, const std::vector<int32_t>& got_all,
                                             const std::vector<int32_t>& ref) {
  const auto& rets = schema.returns();
  for (size_t i = 0; i < got_all.size() && i < rets.size(); ++i) {
    const int32_t got = got_all[i];
    if (got == protocol::kAliasNotTensor) continue;
    const std::string ret = "return " + std::to_string(i);
    const c10::AliasInfo* info = rets[i].alias_info();
    if (!info) {
      if (got >= 0 && (i >= ref.size() || ref[i] != got))
        return ret + " shares storage with " + arg_name(schema, got) + ", but the schema's return is a new tensor (no alias annotation): " +
               "a caller that later writes one of them changes the other";
      continue;
    }
    if (!info->isWrite()) continue;
    const int32_t want = written_argument(schema, *info);
    if (want >= 0 && got != want)
      return ret + " must be " + arg_name(schema, want) + " itself (schema " + schema.name() + "." + schema.overload_name() +
             ": Tensor(a!) returns the written argument), but it " +
             (got == protocol::kAliasNone ? std::string("is a different tensor") : "shares storage with " + arg_name(schema, got));
  }
  return std::nullopt;
}

}  // namespace kg::harness

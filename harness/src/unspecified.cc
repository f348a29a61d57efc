// Outputs an op leaves unspecified for given arguments: nothing a kernel can be held to.
#include "kernelgate/harness.h"
#include "kernelgate/names.h"
#include "util.h"

#include <set>

namespace kg::harness {
namespace {

const c10::IValue* argument(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs, const std::string& name) {
  const int i = arg_index(schema, name);
  return i >= 0 && static_cast<size_t>(i) < inputs.size() ? &inputs[static_cast<size_t>(i)] : nullptr;
}

bool int_argument_is(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs, const std::string& name, int64_t v) {
  const c10::IValue* a = argument(schema, inputs, name);
  return a && a->isInt() && a->toInt() == v;
}

bool bool_argument_is(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs, const std::string& name, bool v) {
  const c10::IValue* a = argument(schema, inputs, name);
  return a && a->isBool() && a->toBool() == v;
}

// Output `position` (0-based over the op's outputs) named `name` ("" when the schema names none).
bool unspecified(const std::string& base, size_t position, const std::string& name, const c10::FunctionSchema& schema,
                 const std::vector<c10::IValue>& inputs) {
  // The generator's state after the call (attention's dropout seeds) and the debug mask: what a
  // kernel returns there is its own business; the attention output itself is judged.
  static const std::set<std::string> rng_state = {"philox_seed", "philox_offset", "rng_state", "debug_attn_mask"};
  if (rng_state.count(name)) return true;
  if ((name == "log_sumexp" || name == "logsumexp") && bool_argument_is(schema, inputs, "compute_log_sumexp", false)) return true;
  // nll's total_weight only feeds the mean reduction; with reduction='none' (0) CUDA leaves it
  // unwritten (garbage in the reference itself on the H200).
  if (name == "total_weight" && int_argument_is(schema, inputs, "reduction", 0)) return true;
  // offset2bag, bag_size and max_indices serve a backward that the forward-only variant never
  // runs; CUDA leaves parts of them unwritten (bag_size's entry past the last bag).
  if (base == "_embedding_bag_forward_only" && position >= 1) return true;
  return false;
}

}  // namespace

UnspecifiedOutputs unspecified_outputs(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs) {
  const auto op = names::OpName::from_dispatcher(schema.name(), schema.overload_name());
  const std::string base = op ? op->base() : "";
  const auto& args = schema.arguments();
  const auto& rets = schema.returns();
  UnspecifiedOutputs u;
  u.returns.assign(rets.size(), false);
  u.args.assign(args.size(), false);
  // out= overloads: unnamed returns that are the keyword-only written arguments, in order.
  std::vector<size_t> out_args;
  for (size_t j = 0; j < args.size(); ++j)
    if (args[j].kwarg_only() && writes_argument(args[j])) out_args.push_back(j);
  const bool returns_are_out_args = !out_args.empty() && out_args.size() == rets.size();
  for (size_t k = 0; k < rets.size(); ++k) {
    const std::string name = !rets[k].name().empty() ? rets[k].name() : returns_are_out_args ? args[out_args[k]].name() : "";
    u.returns[k] = unspecified(base, k, name, schema, inputs);
  }
  for (size_t k = 0; k < out_args.size(); ++k) u.args[out_args[k]] = unspecified(base, k, args[out_args[k]].name(), schema, inputs);
  return u;
}

}  // namespace kg::harness

// The vocabulary every layer shares: aten op overload names in each of their spellings, the
// evaluation device, and dtype names. Torch-free; the harness maps dtypes to at::ScalarType.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kg::names {

// ---- op overload names ----------------------------------------------------------------------

// The aten namespace as the dispatcher writes it ("aten::add") and as trace files do ("aten.add.Tensor").
inline constexpr std::string_view kDispatcherNamespace = "aten::";
inline constexpr std::string_view kTraceNamespace = "aten.";
// The overload the dispatcher writes as "" ("aten::mm") and every other spelling as "default".
inline constexpr std::string_view kDefaultOverload = "default";

// One aten overload. Its name and overload are non-empty runs of letters, digits and '_'.
class OpName {
 public:
  // Accepts "add_.Tensor", "aten::add_.Tensor", "aten.add_.Tensor", and a name without overload
  // ("aten::mm", "mm"), which is the default overload as the dispatcher writes it. Only one
  // namespace prefix is stripped. Throws std::invalid_argument naming `spelling` and these forms.
  static OpName parse(std::string_view spelling);
  static std::optional<OpName> try_parse(std::string_view spelling);
  // Only the spellings without namespace: "add_.Tensor" and a bare "mm" (the default overload).
  static std::optional<OpName> try_parse_unqualified(std::string_view spelling);
  // kernelgate's folder spelling "add___Tensor": the last "__" separates name and overload.
  // Separate from parse(): a name without a dot is the default overload ("__and__").
  static std::optional<OpName> from_folder(std::string_view folder);
  // c10::OperatorName's two fields: ("aten::add", "Tensor"), ("aten::mm", "") for the default
  // overload. nullopt for another namespace ("prims::add") or a malformed name.
  static std::optional<OpName> from_dispatcher(std::string_view name, std::string_view overload);

  const std::string& name() const { return name_; }          // "add_" (the at::_ops struct's name)
  const std::string& overload() const { return overload_; }  // "Tensor", "default"
  // Without the in-place suffix: "add_" -> "add"; "out" overloads share their op's name already.
  std::string base() const;
  std::string profile() const;              // "add_.Tensor": profiles, suites, results.json
  std::string trace() const;                // "aten.add_.Tensor"
  std::string dispatcher_name() const;      // "aten::add_"
  std::string dispatcher_overload() const;  // "Tensor"; "" for the default overload
  std::string folder() const;               // "add___Tensor"

  friend bool operator==(const OpName& a, const OpName& b) { return a.name_ == b.name_ && a.overload_ == b.overload_; }
  friend bool operator!=(const OpName& a, const OpName& b) { return !(a == b); }

 private:
  OpName(std::string name, std::string overload) : name_(std::move(name)), overload_(std::move(overload)) {}
  std::string name_;
  std::string overload_;
};

// What follows the dispatcher's namespace in a qualified operator name: "aten::relu" -> "relu";
// nullopt for another namespace's operator ("prims::add", "kgsub::relu__default").
std::optional<std::string_view> in_dispatcher_namespace(std::string_view qualified);
// What follows the trace files' namespace: "aten.add.Tensor" -> "add.Tensor"; nullopt for another
// namespace's operator ("prims.add.default").
std::optional<std::string_view> in_trace_namespace(std::string_view qualified);
// What follows either aten prefix ("aten::" or "aten."), once; nullopt when there is none.
std::optional<std::string_view> without_aten_prefix(std::string_view spelling);
// The folder spelling of an op as written, each '.' becoming "__": "add_.Tensor" -> "add___Tensor".
std::string folder_spelling(std::string_view op);

// ---- device ---------------------------------------------------------------------------------

// Where kernels and the reference run; Cuda is cuda:0 of the runner's box.
enum class Device { Cpu = 0, Cuda = 1 };
const char* device_name(Device d);  // "cpu", "cuda"
// "cpu" or "cuda"; nullopt for anything else ("auto" is the command line's to resolve).
std::optional<Device> try_parse_device(std::string_view name);
// The same; throws std::invalid_argument naming `name` and the accepted names.
Device parse_device(std::string_view name);

// ---- dtypes ---------------------------------------------------------------------------------

// The dtypes kernelgate names, in the order its lists print them (floating ones first).
enum class Dtype { F16, BF16, F32, F64, C32, C64, C128, I8, I16, I32, I64, U8, U16, U32, U64, B8 };
const std::vector<Dtype>& all_dtypes();

std::string_view short_name(Dtype d);   // "f16", "bf16", ..., "b8": profiles, trace tensors, messages
std::string_view torch_name(Dtype d);   // "float16": torch.float16 without the module
std::string torch_spelling(Dtype d);    // "torch.float16"
std::string_view torch_alias(Dtype d);  // "half", "float", "double", "chalf", "cfloat", "cdouble",
                                        // "short", "int", "long"; "" for the others
// Floating or complex: the dtypes a tolerance applies to (every other one is compared exactly).
bool is_floating(Dtype d);
// Whether BackendBench binds the short name in its trace specs (f16 -> torch.float16): all but
// u16, u32 and u64.
bool is_trace_abbreviation(Dtype d);

// "f32".
std::optional<Dtype> try_parse_short_dtype(std::string_view name);
// "float32", "torch.float32" and the aliases ("float", "torch.float").
std::optional<Dtype> try_parse_torch_dtype(std::string_view name);
// Either of the above. Throws std::invalid_argument naming `name` and the accepted names.
Dtype parse_dtype(std::string_view name);

}  // namespace kg::names

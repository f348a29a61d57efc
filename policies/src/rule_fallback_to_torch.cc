// fallback_to_torch (docs/threats.md B1), static half: the artifact imports a PyTorch compute entry
// point, or the means to find one at run time.
//
// Why: a kernel that calls aten for the answer is judged as PyTorch, not as itself: its
// "speedup" and "correctness" are PyTorch's. The runner-side dispatcher observer sees calls
// that go through the dispatcher; this rule sees the ones that do not (at::native::*, at::cpu::*
// kernels called directly) and the ones that do, before the code ever runs.
//
// What counts as compute: every aten operator entry point (at::_ops::<op>::call/redispatch, the
// per-backend kernel namespaces at::native/cpu/cuda/meta/composite*), out-of-line at::Tensor
// methods that are operators (abs_, index, ...), the dispatcher itself (c10::Dispatcher,
// OperatorHandle, OperatorEntry, KernelFunction), the JIT's operator registry and interpreter,
// autograd's engine and generated functions, and the loader functions that look symbols up by
// name (dlsym and friends: with them any entry point is reachable without importing it).
//
// What is allowed (an honest kernel needs them; see docs/rules.md for the full list): allocation
// and fills (empty, empty_like, empty_strided, new_empty, zeros/ones/full and their _like and
// new_ forms, fill_, zero_, resize_), views and layout (view, reshape, as_strided, expand,
// transpose, permute, select, slice, narrow, squeeze/unsqueeze, flatten, alias, detach,
// contiguous), dtype/device conversion and copies (to, _to_copy, clone, copy_, and resolve_conj,
// resolve_neg, lift_fresh, which Python's numpy conversions dispatch), reading one
// element (item, _local_scalar_dense), metadata (sizes, strides, data_ptr, numel, options, ...),
// TORCH_CHECK machinery, Scalar conversion, TensorIterator, at::parallel_for, and the CUDA
// current stream/device getters. Fills and copies produce no op's answer by themselves; a kernel
// that returns one is caught by trivial_output. An allowed entry becomes compute when it IS the
// op being judged (clone judged as clone.default, zeros_like as zeros_like.default, ...).
#include "kernelgate/names.h"
#include "kernelgate/rules.h"
#include "rule_util.h"

#include <map>
#include <set>

namespace kg::policy {
namespace {

using rules::bare;
using rules::components;
using rules::qualified_name;

// at::_ops struct name -> the op base names it computes (when one of them is the judged op,
// the entry is a fallback after all).
const std::map<std::string, std::set<std::string>>& allowed_ops() {
  static const std::map<std::string, std::set<std::string>> m = {
      // allocation and fills
      {"empty_memory_format", {"empty"}},
      {"empty_names", {"empty"}},
      {"empty_strided", {"empty_strided"}},
      {"empty_like", {"empty_like"}},
      {"new_empty", {"new_empty"}},
      {"new_empty_strided", {"new_empty_strided"}},
      {"zeros", {"zeros"}},
      {"zeros_like", {"zeros_like"}},
      {"ones", {"ones"}},
      {"ones_like", {"ones_like"}},
      {"full", {"full"}},
      {"full_like", {"full_like"}},
      {"scalar_tensor", {"scalar_tensor", "fill_", "fill"}},
      {"new_zeros", {"new_zeros"}},
      {"new_ones", {"new_ones"}},
      {"new_full", {"new_full"}},
      {"fill__Scalar", {"fill_", "fill"}},
      {"fill__Tensor", {"fill_", "fill"}},
      {"zero_", {"zero_", "zeros", "zeros_like"}},
      {"resize_", {"resize_"}},
      {"resize_as_", {"resize_as_"}},
      // views and layout
      {"view", {"view", "_unsafe_view"}},
      {"view_dtype", {"view"}},
      {"reshape", {"reshape", "view"}},
      {"_reshape_alias", {"_reshape_alias", "view"}},
      {"as_strided", {"as_strided"}},
      {"as_strided_", {"as_strided_"}},
      {"expand", {"expand"}},
      {"expand_as", {"expand_as", "expand"}},
      {"broadcast_to", {"broadcast_to", "expand"}},
      {"broadcast_tensors", {"broadcast_tensors", "expand"}},
      {"transpose_int", {"transpose"}},
      {"t", {"t", "transpose"}},
      {"permute", {"permute"}},
      {"select_int", {"select"}},
      {"slice_Tensor", {"slice"}},
      {"narrow", {"narrow", "slice"}},
      {"unsqueeze", {"unsqueeze"}},
      {"squeeze", {"squeeze"}},
      {"squeeze_dim", {"squeeze"}},
      {"squeeze_dims", {"squeeze"}},
      {"flatten_using_ints", {"flatten", "view"}},
      {"unflatten_int", {"unflatten", "view"}},
      {"alias", {"alias"}},
      {"detach", {"detach", "alias"}},
      {"view_as", {"view_as", "view"}},
      {"reshape_as", {"reshape_as", "view"}},
      {"unbind_int", {"unbind"}},
      {"split_Tensor", {"split"}},
      {"chunk", {"chunk"}},
      {"contiguous", {"contiguous", "clone"}},
      {"movedim_int", {"movedim"}},
      {"movedim_intlist", {"movedim"}},
      {"moveaxis_int", {"moveaxis", "movedim"}},
      {"moveaxis_intlist", {"moveaxis", "movedim"}},
      {"swapaxes", {"swapaxes", "transpose"}},
      {"swapdims", {"swapdims", "transpose"}},
      {"unfold", {"unfold"}},
      {"diagonal", {"diagonal"}},
      {"view_as_real", {"view_as_real"}},
      {"view_as_complex", {"view_as_complex"}},
      {"mT", {"mT"}},
      {"adjoint", {"adjoint"}},
      {"numpy_T", {"numpy_T"}},
      {"matrix_H", {"matrix_H"}},
      {"mH", {"mH"}},
      // dtype/device conversion and copies
      {"to_dtype", {"to", "_to_copy"}},
      {"to_dtype_layout", {"to", "_to_copy"}},
      {"to_device", {"to", "_to_copy"}},
      {"to_other", {"to", "_to_copy"}},
      {"_to_copy", {"to", "_to_copy"}},
      {"clone", {"clone"}},
      {"copy_", {"copy_", "copy", "clone", "_to_copy"}},
      // what torch's Python conversions to and from numpy dispatch (Tensor.numpy(),
      // torch.from_numpy, torch.tensor): no-ops on a real tensor without conj or neg bits
      {"resolve_conj", {"resolve_conj"}},
      {"resolve_neg", {"resolve_neg"}},
      {"lift_fresh", {"lift_fresh"}},
      // one element, metadata
      {"item", {"item"}},
      {"_local_scalar_dense", {"_local_scalar_dense", "item"}},
      {"sym_size_int", {}},
      {"sym_stride_int", {}},
      {"sym_numel", {}},
      {"sym_storage_offset", {}},
      {"size_int", {}},
      {"stride_int", {}},
      {"is_same_size", {}},
      {"result_type_Tensor", {}},
      {"result_type_Scalar", {}},
      {"can_cast", {}},
      {"promote_types", {}},
      {"_has_compatible_shallow_copy_type", {}},
  };
  return m;
}

// Out-of-line at::Tensor / at::TensorBase methods an honest kernel may import, with the ops
// they compute. Everything else those classes export out of line is an operator (abs_, neg_,
// index, index_put_, normal_, ...), including in newer libtorch versions.
const std::map<std::string, std::set<std::string>>& allowed_methods() {
  static const std::map<std::string, std::set<std::string>> m = {
      {"Tensor", {}},
      {"TensorBase", {}},
      {"~Tensor", {}},
      {"~TensorBase", {}},
      {"operator=", {}},
      {"data_ptr", {}},
      {"const_data_ptr", {}},
      {"mutable_data_ptr", {}},
      {"data", {}},
      {"item", {"item"}},
      {"to", {"to", "_to_copy"}},
      {"view", {"view"}},
      {"reshape", {"reshape", "view"}},
      {"as_strided", {"as_strided"}},
      {"as_strided_symint", {"as_strided"}},
      {"slice", {"slice"}},
      {"slice_symint", {"slice"}},
      {"expect_contiguous", {"contiguous"}},
      {"__dispatch_contiguous", {"contiguous", "clone"}},
      {"contiguous", {"contiguous", "clone"}},
      {"new_empty", {"new_empty"}},
      {"new_empty_symint", {"new_empty"}},
      {"new_zeros", {"new_zeros"}},
      {"new_zeros_symint", {"new_zeros"}},
      {"new_ones", {"new_ones"}},
      {"new_full", {"new_full"}},
      {"fill_", {"fill_", "fill"}},
      {"zero_", {"zero_", "zeros", "zeros_like"}},
      {"_base", {}},
      {"_version", {}},
      {"enforce_invariants", {}},
      {"grad_fn", {}},
      {"is_leaf", {}},
      {"is_view", {}},
      {"name", {}},
      {"output_nr", {}},
      {"print", {}},
      {"quantizer", {}},
      {"requires_grad_", {}},
      {"retain_grad", {}},
      {"retains_grad", {}},
      {"tensor_data", {}},
      {"variable_data", {}},
      {"toString", {}},
      {"sizes", {}},
      {"strides", {}},
      {"size", {}},
      {"stride", {}},
      {"numel", {}},
      {"dim", {}},
      {"options", {}},
      {"scalar_type", {}},
      {"dtype", {}},
      {"device", {}},
      {"layout", {}},
      {"is_contiguous", {}},
      {"storage_offset", {}},
      {"sym_sizes", {}},
      {"sym_strides", {}},
      {"sym_numel", {}},
      {"sym_size", {}},
      {"sym_stride", {}},
      {"sym_storage_offset", {}},
      {"defined", {}},
      {"reset", {}},
      {"storage", {}},
      {"nbytes", {}},
      {"itemsize", {}},
      {"element_size", {}},
      {"has_storage", {}},
      {"is_non_overlapping_and_dense", {}},
      {"suggest_memory_format", {}},
      {"accessor", {}},
      {"packed_accessor32", {}},
      {"packed_accessor64", {}},
      {"generic_packed_accessor", {}},
      {"unsafeGetTensorImpl", {}},
      {"getIntrusivePtr", {}},
      {"unsafeReleaseTensorImpl", {}},
      {"_fw_grad", {}},
      {"_set_fw_grad", {}},
      {"is_same", {}},
      {"use_count", {}},
      {"weak_use_count", {}},
      {"get_device", {}},
      {"is_cpu", {}},
      {"is_cuda", {}},
      {"template_type", {}},
  };
  return m;
}

// at::cuda:: and c10::cuda:: entries that only name the current device/stream or allocate.
const std::set<std::string>& allowed_cuda() {
  static const std::set<std::string> s = {
      "getCurrentCUDAStream",
      "getDefaultCUDAStream",
      "getStreamFromPool",
      "setCurrentCUDAStream",
      "getCurrentDeviceProperties",
      "getDeviceProperties",
      "device_count",
      "current_device",
      "set_device",
      "warp_size",
      "getCUDADeviceAllocator",
      "CUDAStream",
      "CUDACachingAllocator",
      "CUDAGuard",
      "OptionalCUDAGuard",
      "CUDAStreamGuard",
      "impl",
      "detail",
      "c10_cuda_check_implementation",
      "stream_synchronize",
      "device_synchronize",
      "ExchangeDevice",
      "MaybeSetDevice",
      "GetDevice",
      "SetDevice",
      "GetDeviceCount",
      "getNumGPUs",
      "is_available",
      "CUDAEvent",
      "memcpy_and_sync",
  };
  return s;
}

// Namespaces that hold operator kernels: any import from them computes an op.
bool kernel_namespace(const std::string& ns) {
  static const std::set<std::string> s = {"native",
                                          "cpu",
                                          "meta",
                                          "mps",
                                          "compositeexplicitautograd",
                                          "compositeimplicitautograd",
                                          "compositeexplicitautogradnonfunctional",
                                          "compositeimplicitautogradnestedtensor",
                                          "functionalization",
                                          "functorch",
                                          "vmap"};
  return s.count(ns) > 0;
}

// Loader functions that find any entry point by name, or walk the loaded objects to do so.
const std::set<std::string>& lookup_functions() {
  static const std::set<std::string> s = {"dlsym",   "dlvsym",   "dlopen",          "dlmopen",         "__libc_dlsym", "__libc_dlopen_mode",
                                          "_dl_sym", "_dl_vsym", "dl_iterate_phdr", "_dl_find_object", "_r_debug",     "dlinfo",
                                          "dladdr",  "dladdr1"};
  return s;
}

bool judged(const std::set<std::string>& computes, const std::string& base) { return computes.count(base) > 0; }

// Why `raw` is a compute import for the judged op `base`, or "" when it is not.
std::string classify(const std::string& raw, const std::string& base) {
  if (lookup_functions().count(raw)) return "symbol lookup at run time";
  const std::string q = qualified_name(demangle(raw));
  const std::vector<std::string> c = components(q);
  if (c.size() < 2) return "";
  const std::string& top = c[0];
  if (top == "at") {
    const std::string ns = bare(c[1]);
    if (ns == "_ops" && c.size() >= 3) {
      auto it = allowed_ops().find(bare(c[2]));
      if (it == allowed_ops().end()) return "aten operator entry point";
      if (judged(it->second, base)) return "the judged op's own aten entry point";
      return "";
    }
    if (kernel_namespace(ns)) return "aten kernel called directly (at::" + ns + ")";
    if (ns == "cuda" && c.size() >= 3) {
      if (bare(c[2]) == "blas" || bare(c[2]) == "solver" || bare(c[2]) == "sparse") return "aten's CUDA library wrappers";
      return allowed_cuda().count(bare(c[2])) ? "" : "aten CUDA kernel entry point";
    }
    if ((ns == "Tensor" || ns == "TensorBase") && c.size() >= 3) {
      auto it = allowed_methods().find(bare(c[2]));
      if (it == allowed_methods().end()) return "aten operator as a Tensor method";
      if (judged(it->second, base)) return "the judged op as a Tensor method";
      return "";
    }
    return "";
  }
  if (top == "c10") {
    const std::string ns = bare(c[1]);
    if (ns == "Dispatcher" || ns == "OperatorHandle" || ns == "KernelFunction" || ns == "BoxedKernel" || ns == "TypedOperatorHandle")
      return "the dispatcher (calls any operator by name)";
    if (ns == "impl" && c.size() >= 3 && bare(c[2]) == "OperatorEntry") return "the dispatcher (calls any operator by name)";
    return "";
  }
  if (top == "torch") {
    const std::string ns = bare(c[1]);
    if (ns == "jit") {
      const std::string fn = c.size() >= 3 ? bare(c[2]) : "";
      if (fn == "parseSchemaOrName" || fn == "parseSchema" || fn == "parseName") return "";  // registration glue
      return "the TorchScript runtime (finds and runs operators)";
    }
    if (ns == "autograd" && c.size() >= 3) {
      const std::string sub = bare(c[2]);
      if (sub == "impl" || sub == "make_variable" || sub == "utils" || sub == "AutoGradMode" || sub == "GradMode" || sub == "Variable" ||
          sub == "VariableHooks" || sub == "SavedVariable")
        return "";
      return "autograd's engine or generated functions (run operators)";
    }
    if (ns == "nn" || ns == "optim" || ns == "data" || ns == "fft" || ns == "linalg" || ns == "special")
      return "a torch:: C++ frontend function";
    return "";
  }
  return "";
}

// The judged op's name as the _ops structs spell it ("add_" for add_.Tensor); "" for no op.
std::string ops_struct_name(const std::string& op) {
  const auto name = names::OpName::try_parse(op);
  return name ? name->name() : "";
}

}  // namespace

std::string rule_fallback_to_torch(const ArtifactInfo& info, const std::string& op) {
  const std::string base = ops_struct_name(op);
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const auto& raw : info.imports) {
    std::string why = classify(raw, base);
    if (!why.empty()) by_reason[why].push_back(raw);
  }
  if (by_reason.empty()) return "";
  std::string o = "imports ";
  bool first = true;
  for (const auto& [why, syms] : by_reason) {
    o += (first ? "" : "; also ") + why + ": " + rules::list_symbols(syms);
    first = false;
  }
  return o;
}

bool dispatched_operator_allowed(const std::string& name, const std::string& op) {
  const auto unqualified = names::in_dispatcher_namespace(name);
  if (!unqualified) return true;
  // Compared as written: the runner's names are only checked to be printable.
  const std::string called(*unqualified);
  const std::string base = ops_struct_name(op);
  if (called == base) return false;
  // The list is keyed by at::_ops struct names: the operator's name, or its name, '_' and the
  // overload ("fill__Scalar", "size_int").
  for (const auto& [entry, computes] : allowed_ops())
    if ((entry == called || entry.rfind(called + "_", 0) == 0) && !judged(computes, base)) return true;
  return false;
}

}  // namespace kg::policy

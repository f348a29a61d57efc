// The catalogue's tables (catalogue.h). A new rule, category or verdict is one row here, one
// enumerator, and a line in the docs the catalogue test reads.
#include "kernelgate/catalogue.h"

#include <cstddef>

namespace kg::policy {
const char* layer_name(unsigned layer) {
  switch (layer) {
    case kStatic: return "static";
    case kCalls: return "calls";
    case kRunner: return "runner";
    case kTrials: return "trials";
    case kTimed: return "timing";
    case kCudaHost: return "cuda host";
  }
  return "";
}

const std::vector<RuleInfo>& rule_catalogue() {
  static const std::vector<RuleInfo> rules = {
      {Rule::FallbackToTorch, "fallback_to_torch", "B1", kStatic,
       "static: the artifact's imports of aten operator entry points (at::_ops::*::call/redispatch), per-backend "
       "kernels (at::native, at::cpu, ...), the dispatcher, the TorchScript and autograd runtimes and symbol lookup "
       "(dlsym, dlopen, dl_iterate_phdr), less what the op's stub built the same way imports",
       "the kernel computes its answer by calling PyTorch's own operators instead of its own code"},
      {Rule::ForbiddenLibrary, "forbidden_library", "B2", kStatic,
       "static: DT_NEEDED entries, imports of vendor library APIs (BLAS, LAPACK, cuBLAS, cuDNN, oneDNN, MKL, ...), "
       "header-only library namespaces in exports, library names in the file when it imports dlopen/dlsym; against "
       "the profile's allowed libraries",
       "the kernel uses a vendor library (cuBLAS, cuDNN, MKL, ...) the profile does not allow"},
      {Rule::TrivialOutput, "trivial_output", "B3, B4", kCalls,
       "every wrong call (samples, trials, timed calls): an output that is constant, or bitwise one of the inputs, "
       "where the reference is not, the same again on an identical repeat, and no honest mistake (dtype, promotion) "
       "explains it",
       "a wrong output that is a constant or one of the inputs returned as is"},
      {Rule::UnwrittenOutput, "unwritten_output", "B5", kCalls,
       "every wrong call: most wrong elements hold the runner's allocation poison, or, bit for bit, an earlier "
       "call's output on other values at the same positions",
       "the kernel left its output (or most of it) unwritten, so it holds what an earlier call left there"},
      {Rule::InputMutated, "input_mutated", "B6", kCalls,
       "every call: each argument the schema does not let the op write is compared bit for bit before and after",
       "the kernel wrote to an argument its schema does not let it write"},
      {Rule::ReplayedOutput, "replayed_output", "B7", kCalls | kTrials,
       "fresh-input trial rounds on up to 4 passing samples, near twins (a few values changed), fresh values in the "
       "previous call's very buffers, and every wrong call: an output identical to an earlier call's on other "
       "values where this call's reference differs from it",
       "the kernel returned an earlier call's answer for other values (a cache keyed on pointers or fingerprints)"},
      {Rule::StatefulOutput, "stateful_output", "B8", kTrials,
       "fresh-input trial rounds and two identical repeats of a passing call: right on the first call, wrong later",
       "right on a first call and wrong on later ones: state carried across calls"},
      {Rule::NondeterministicOutput, "nondeterministic_output", "B9", kTrials,
       "two identical repeats of a passing call, and one of every unexplained wrong call, must give the same "
       "answer, beyond the reference's own run-to-run spread on the same inputs",
       "two identical calls gave two different answers (races, uninitialised memory)"},
      {Rule::AsyncEscape, "async_escape", "B10", kRunner,
       "runner evidence after every call: outputs or arguments that change after a judged call returned (CPU), "
       "threads the kernel started still running when it returned, on a GPU the timed stream still busy once the "
       "call's end event completed, its median wait for an idle device against eager's, and the work a call (timed "
       "or not) queued on streams of its own (bracketed by events: it must begin after the call's start event and "
       "end before its stop event); and one judged call after timing made in a timed call's state (no allocation "
       "poisoning)",
       "work that outlives the call it belongs to: threads, streams or writes that escape the timed window"},
      {Rule::ImpossibleSpeed, "impossible_speed", "B11", kTimed,
       "timing: the candidate's median on each timed sample, every timed call on values no earlier call saw, against "
       "the roofline floor (output bytes at the measured peak bandwidth, matmul-family flops at the peak rate)",
       "a timed median below what the hardware can do for the op (the roofline floor)"},
      {Rule::TimerTampering, "timer_tampering", "B12", kStatic,
       "static: exports of clock or runtime symbols (interposition), imports of clocks and code-patching tools "
       "(mprotect, syscall, dl_iterate_phdr), text relocations, writable+executable segments, an executable stack",
       "the artifact can interpose on or patch the clocks and runtime calls timing relies on"},
      {Rule::CacheTampering, "cache_tampering", "B13", kStatic | kRunner,
       "static: imports of persisting-L2 and device-limit APIs; on a GPU, the persisting-L2 limit and window read "
       "back after every call",
       "the kernel changes the device's cache settings (persisting L2) to look faster than it is"},
      {Rule::ShapeSpecialisation, "shape_specialisation", "B14", kStatic | kCalls | kTimed,
       "static: imports that read the environment, argv or host identity; the timed calls' outputs judged like the "
       "first call's; the largest sample scaled up (x4, and up to 2^22 input elements where affordable); a wrong "
       "larger call is cut down keeping its values, and must be right there yet differ at the same positions, or be "
       "16x less accurate than the library only at the larger size",
       "a kernel right only on the shapes or circumstances it was judged on"},
      {Rule::NoDeviceWork, "no_device_work", "B19", kCudaHost,
       "on a GPU, the cuda kind: every judged call that returns elements must queue device work through libcudart (a "
       "kernel launch, memset or device-to-device copy, counted by the runner's own libcudart entry points); a "
       "result computed on the host and copied up, or a host function queued on a stream, is not",
       "a GPU kernel that computes its result on the host and only copies it to the device"},
      {Rule::ProtocolViolation, "protocol_violation", "B17", kStatic | kRunner,
       "every exchange with the runner: a well-formed reply, claimed times within the supervisor's own clock, "
       "nothing written to the runner's stdout; the artifact readable as a shared object",
       "the runner's replies break the protocol: malformed, claimed times the supervisor's clock contradicts, stray "
       "output"},
      {Rule::SandboxViolation, "sandbox_violation", "A", kRunner,
       "the sandbox's record of every runner: a system call its seccomp filter denied, and every file the kernel "
       "opened during a call outside the runtime's own files (syscall and path)",
       "the runner tried a system call the sandbox denies"},
  };
  return rules;
}

const std::vector<CategoryInfo>& category_catalogue() {
  static const std::vector<CategoryInfo> categories = {
      {Category::DtypeMismatch, "dtype_mismatch", "a return's dtype, or the kind or number of returns, differs from the reference's"},
      {Category::ShapeMismatch, "shape_mismatch", "a return's shape differs from the reference's (a broadcastable shape is still wrong)"},
      {Category::NanMask, "nan_mask", "NaN where the reference has none, or none where it has one"},
      {Category::InfMask, "inf_mask", "+-inf in other positions or with other signs than the reference's"},
      {Category::ValueMismatch, "value_mismatch", "finite values outside the policy's tolerance (integers and bools: not equal)"},
      {Category::InputMutated, "input_mutated", "an argument the schema does not let the op write changed, bit for bit"},
      {Category::Aliasing, "aliasing", "a return shares storage with the arguments other than the schema says"},
      {Category::CompileError, "compile_error", "the submission did not build (the compiler's diagnostics are the evidence)"},
      {Category::RuntimeError, "runtime_error", "the kernel threw, or its artifact could not be loaded"},
      {Category::Crash, "crash", "the runner died: a signal, or a protocol violation"},
      {Category::Timeout, "timeout", "the call ran past the policy's time limit"},
      {Category::MemoryLimit, "memory_limit", "the runner ran past the policy's memory limit"},
  };
  return categories;
}

const std::vector<VerdictInfo>& verdict_catalogue() {
  static const std::vector<VerdictInfo> verdicts = {
      {Verdict::Pass, "pass", "every sample was right and no rule the profile rejects on fired"},
      {Verdict::Fail, "fail", "a failure: a wrong answer, a failed build, or a kernel that threw, died or ran past a limit"},
      {Verdict::Rejected, "rejected", "a rule the profile rejects on fired, whatever the answers"},
      {Verdict::Error, "error",
       "kernelgate could not evaluate the op (no such op, no samples, the build sandbox failed, no GPU for the kind, no "
       "toolchain baseline to tell the artifact's static findings from the toolchain's own)"},
  };
  return verdicts;
}

const RuleInfo& rule_info(Rule r) { return rule_catalogue()[static_cast<std::size_t>(r)]; }
const char* rule_id(Rule r) { return rule_info(r).id; }
std::optional<Rule> rule_from_id(std::string_view id) {
  for (const auto& row : rule_catalogue())
    if (id == row.id) return row.rule;
  return std::nullopt;
}

const CategoryInfo& category_info(Category c) { return category_catalogue()[static_cast<std::size_t>(c)]; }
const char* category_id(Category c) { return category_info(c).id; }
std::optional<Category> category_from_id(std::string_view id) {
  for (const auto& row : category_catalogue())
    if (id == row.id) return row.category;
  return std::nullopt;
}

const VerdictInfo& verdict_info(Verdict v) { return verdict_catalogue()[static_cast<std::size_t>(v)]; }
const char* verdict_id(Verdict v) { return verdict_info(v).id; }
std::optional<Verdict> verdict_from_id(std::string_view id) {
  for (const auto& row : verdict_catalogue())
    if (id == row.id) return row.verdict;
  return std::nullopt;
}

}  // namespace kg::policy

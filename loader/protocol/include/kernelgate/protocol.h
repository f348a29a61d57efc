// The supervisor <-> kg-runner protocol. Both sides include this header; bump kVersion on any
// change of layout.
//
// Control: a SOCK_SEQPACKET socketpair, the runner's end is fd 3. Every message is one
// fixed-size struct below; a Call carries a memfd in SCM_RIGHTS.
// Data: the memfd holds an input region and an output region of encoded value lists (see
// wire.h): the supervisor writes one or more input sets back to back (the same arguments with
// different values; warm-up and timed calls rotate through them), the runner writes, per set, the
// returns of that set's last call followed by the post-call state of every argument. The
// supervisor decodes the output region as hostile bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kg::protocol {

constexpr uint32_t kMagic = 0x3150474B;  // "KGP1"
// 2: LoadMsg kind/device, CallMsg device/flush/output specs, CallResultMsg timer, idle waits
//    and evidence bits.
// 3: CallResultMsg dispatched operators and per-return aliasing; evidence bits 4-8.
// 4: input sets (CallMsg n_sets/set_bytes, CallResultMsg n_sets/set_output_bytes), CallMsg flags.
// 5: kCallSecondSetInPlace.
// 6: Prepare (a runner started ahead sets its device up before it is given an artifact).
// 7: ArtifactKind::PythonSource.
// 8: ArtifactKind::PythonProblem and PythonSolution (KernelBench's Model and ModelNew), LoadMsg
//    model_seed and model_init, a problem's LoadResult message on success, PrepareMsg flags
//    (kPrepareStartPython).
// 9: ModelAction::Extensions (load_inline's calls a solution's first runner could not satisfy) and
//    ModelAction::Forward64.
// 10: LoadMsg flags (kLoadInstallOverAten, kLoadGradient, kLoadInstallAutograd), ModelAction::Train and
//     ModelAction::Backward (train-check, grad-check, a KernelBench solution's own autograd).
// 11: LoadMsg flag kLoadListExtensions (a python source's load_inline calls, listed before it runs).
// 12: ShutdownDone (the supervisor takes the runner's record then, not after its teardown).
// 13: CallMsg stop_min_reps and stop_rel_error (timed calls that end once their median is
//     known well enough, timing_stop.h); CallResultMsg n_sets is then the sets the calls used.
constexpr uint32_t kVersion = 13;
constexpr int kRunnerFd = 3;

enum class MsgType : uint32_t {
  Hello = 1,       // runner -> supervisor, once after start-up
  Load = 2,        // supervisor -> runner: dlopen an artifact (cpu, cuda), load a cubin (nvrtc) or run a python source
  LoadResult = 3,  // runner -> supervisor
  Call = 4,        // supervisor -> runner: run the loaded op on the inputs in the memfd
  CallResult = 5,  // runner -> supervisor
  Shutdown = 6,    // supervisor -> runner
  Prepare = 7,     // supervisor -> runner: set the device up now (answered by a LoadResult); no artifact
  // runner -> supervisor, the answer to Shutdown: everything it wrote is in its streams and it
  // exits now. A runner whose interpreter writes its own buffers while it ends (python) sends none.
  ShutdownDone = 8,
};

enum class CallStatus : uint32_t {
  Ok = 0,
  Exception = 1,       // the op threw (message says what)
  OutputTooLarge = 2,  // returns did not fit in the output region
  BadInput = 3,        // the runner could not decode the inputs (a supervisor bug)
  DeviceError = 4,     // a CUDA error (illegal address, launch failure ...): the runner exits after reporting
};

// PythonSource: a .py file the runner executes with its embedded interpreter (loader/runner/python/),
// its entry function registered as op_name with the aten overload's schema.
// PythonProblem: a KernelBench problem file (the reference: Model, get_inputs, get_init_inputs);
// PythonSolution: a solution file (ModelNew). Both are registered as one op of kModelSchema.
enum class ArtifactKind : uint32_t {
  SharedObject = 0,
  CudaSharedObject = 1,
  Cubin = 2,
  PythonSource = 3,
  PythonProblem = 4,
  PythonSolution = 5
};
inline constexpr uint32_t kMaxArtifactKind = 5;
// How a python load's error starts when the source does not compile (a SyntaxError): the
// supervisor reports it as the op's compile_error, not a runtime_error.
inline constexpr const char* kPythonDoesNotCompile = "the python source does not compile";
// What a python load's error holds when the source asked torch.utils.cpp_extension to build
// (load_inline), which the runner's interpreter refuses: kernelgate's limit, reported as the op's
// error, never as the submission's failure.
inline constexpr const char* kCppExtensionRefused = "kernelgate: torch.utils.cpp_extension cannot build";
// What a python load's error holds when the source imports Triton: its JIT runs ptxas and a C
// compiler as subprocesses and writes its cache, all of which the runner's sandbox refuses.
// kernelgate's limit as well, never the submission's failure.
inline constexpr const char* kTritonRefused = "kernelgate: Triton kernels cannot run in the runner yet";

// The op a problem or solution file is registered as: `action` says what a call does
// (ModelAction), `seed` seeds get_inputs(), `inputs` are the model's inputs or its state.
inline constexpr const char* kModelSchemaArguments = "(int action, int seed, Tensor[] inputs) -> Tensor[]";
enum class ModelAction : int64_t {
  Inputs = 0,      // problem: torch.manual_seed(seed), then get_inputs() (tensors only)
  Forward = 1,     // both: model(*inputs), under no_grad; its tensor or tuple of tensors as a list
  State = 2,       // problem: the state_dict's tensors in order; solution: those copied into its own
                   // state_dict when every count, shape and dtype agrees (returns [1]), else nothing (returns [0])
  Extensions = 3,  // solution: the load_inline calls that found no built library (kernelgate/inline_extension.h):
                   // an int64 count, then kInlineExtensionFields uint8 tensors (UTF-8 text) per call
  Forward64 = 4,   // problem: a float64 copy of Model on the inputs upcast to float64 (the truth the
                   // context-aware tolerance measures errors against)
  Train = 5,       // problem: `inputs` = [int64 tensor {steps}]: Model trained that many steps from `seed`
                   // (kernelgate/train_check.h); returns [float64 losses, float64 seconds per step,
                   // float64 parameters flattened]; fewer losses than steps when one was not finite
  Backward = 6,    // both: `seed` = n, `inputs` = the model's n inputs then one weight per floating output:
                   // with autograd on, the gradients of sum_k (output_k * weight_k).sum() with respect to
                   // each floating input, then to each of model.parameters() (zeros where unused)
};
// load_inline's call as the runner reports it: name, cpp_sources, cuda_sources, with_cuda ("1"/"0"),
// functions, extra_cflags, extra_cuda_cflags, extra_ldflags (lists joined with '\n').
inline constexpr size_t kInlineExtensionFields = 8;
inline constexpr size_t kMaxInlineExtensions = 16;  // calls recorded per source
enum class DeviceKind : uint32_t { Cpu = 0, Cuda0 = 1 };

// What the runner saw around the calls (evidence; the supervisor decides what it means).
enum Evidence : uint32_t {
  kEvidencePersistingL2Changed = 1u << 0,        // a call changed the persisting-L2 limit or window
  kEvidenceDeviceBusyAfterCall = 1u << 1,        // the timed stream still busy once the call's end event completed
  kEvidenceThreadsLeftRunning = 1u << 2,         // the call left extra threads behind
  kEvidenceFlushSkipped = 1u << 3,               // the cache flush could not run (no memory for the buffer)
  kEvidenceOutputsChangedAfterReturn = 1u << 4,  // returns or arguments changed after a judged call had returned
  kEvidenceObserverOff = 1u << 5,                // the dispatcher observer missed the called op or a canary op (removed or disabled)
  kEvidenceDispatchedOverflow = 1u << 6,         // more distinct operators were dispatched than `dispatched` holds
  kEvidencePoisonOff = 1u << 7,                  // allocation poisoning was switched off during a call
  kEvidenceUnwrittenBool = 1u << 8,  // a bool output held bytes other than 0/1 (poison never overwritten); set to 1 before encoding
  kEvidenceNoDeviceWork = 1u << 9,   // a judged call on cuda:0 returned elements but its host code queued no device work
  kEvidenceWorkOutsideTimedRegion = 1u << 10,  // a timed call's work on a stream of its own ran before its start or after its stop event
  kEvidenceSideStreamNotOrdered = 1u << 11,    // a call queued work on a stream not ordered after its stream (no wait, no host sync)
};

constexpr uint32_t kMaxDispatched = 16;        // distinct operators reported per Call
constexpr uint32_t kDispatchedNameBytes = 96;  // each NUL-terminated
constexpr uint32_t kMaxReturnAlias = 16;       // returns whose aliasing is reported
constexpr uint32_t kMaxInputSets = 1024;       // value sets one Call rotates through (> kMaxTimedReps)

// CallMsg flags.
enum CallFlag : uint32_t {
  kCallNoPoison = 1u << 0,  // the judged call runs without allocation poisoning, as timed calls do
  // Two sets and no timed calls: a judged call on set 0, then set 1's values written into that
  // call's very argument buffers (every tensor at its old address, same strides and storage
  // offset) and a second judged call on them. Set 0's arguments come back as they were after the
  // first call, set 1's after the second.
  kCallSecondSetInPlace = 1u << 1,
};
constexpr int32_t kAliasNone = -1;       // the return shares storage with no argument
constexpr int32_t kAliasNotTensor = -2;  // the return is not one defined tensor (list, number, undefined)

struct MsgHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t type;  // MsgType
  uint32_t size;  // sizeof the whole message
};

struct HelloMsg {
  MsgHeader h;
  int32_t pid;
  uint32_t reserved;
  char torch_version[64];
};

// The answer to Shutdown (MsgType::ShutdownDone): the header alone.
struct ShutdownDoneMsg {
  MsgHeader h;
};

struct LoadMsg {
  MsgHeader h;
  char artifact_path[1024];  // path inside the sandbox
  char op_name[256];         // registered name, e.g. "kgsub::relu__default"
  char aten_name[256];       // the aten overload, e.g. "aten::relu" + overload in aten_overload
  char aten_overload[128];
  uint32_t kind;    // ArtifactKind
  uint32_t device;  // DeviceKind: set up before the filter tightens
  uint32_t flags;   // kLoad* bits
  uint32_t reserved;
  // PythonProblem and PythonSolution: the seed both models are constructed under, and for a
  // solution the constructor's arguments as the problem's LoadResult gave them (a Python literal).
  uint64_t model_seed;
  char model_init[2048];
};

// LoadMsg flags.
// The artifact's op (cpu, cuda, python source) also becomes aten's own kernel for the device's
// dispatch key, over the one libtorch registered, so that every caller of the aten overload in the
// runner (a model's forward, autograd's backward formulas, an optimizer) runs it; the op loaded
// before stays the one a Call calls. Loads accumulate this way: train-check's runner loads the
// model, then installs each op of the submission.
inline constexpr uint32_t kLoadInstallOverAten = 1u << 0;
// With no artifact (the aten overload itself): a Call's arguments are the overload's followed by a
// Tensor[] of weights, one per floating return, and it returns [the gradients of
// sum_k (return_k * weight_k).sum() with respect to each floating tensor argument]
// (kernelgate/weighted_grad.h), autograd on. After installs, the forward and the backward formulas
// run the submission's kernels: grad-check.
inline constexpr uint32_t kLoadGradient = 1u << 1;
// With kLoadInstallOverAten: the op goes to the device's Autograd key instead (AutogradCPU,
// AutogradCUDA), in place of aten's derivative formula, and runs with autograd on: a python kernel
// that defines its own torch.autograd.Function then has its own backward used.
inline constexpr uint32_t kLoadInstallAutograd = 1u << 2;
// With a python source (BackendBench's layout): the source is executed with its load_inline calls
// recorded instead of refused, and the op is registered with protocol::kModelSchemaArguments; a
// Call with ModelAction::Extensions returns them (as a KernelBench solution's does), and nothing
// else. The supervisor builds them and loads the source again in a fresh runner, the libraries
// staged beside it. A runner so loaded is used for nothing else.
inline constexpr uint32_t kLoadListExtensions = 1u << 3;

// A runner started ahead of its work (a pool's) does what Load does before the artifact: the
// device (cuda: context, flush buffer, events) and the CPU flush buffer. The filter is not
// tightened: the Load that follows does that, before the artifact's first instruction.
struct PrepareMsg {
  MsgHeader h;
  uint32_t device;  // DeviceKind
  uint32_t flags;   // kPrepare* bits
};
// Prepare also starts the python kind's interpreter (importing torch probes library paths): sent
// before a python Load, so that the supervisor's watch on the box's opens covers only the
// source's own code.
inline constexpr uint32_t kPrepareStartPython = 1u << 0;

struct LoadResultMsg {
  MsgHeader h;
  uint32_t ok;
  uint32_t reserved;
  char message[4096];  // why not; on success a PythonProblem's constructor arguments (LoadMsg::model_init)
};

struct CallMsg {
  MsgHeader h;
  uint64_t call_id;
  uint64_t arena_bytes;  // size of the memfd
  uint64_t input_offset;
  uint64_t input_bytes;
  uint64_t output_offset;
  uint64_t output_capacity;
  uint32_t warmup;      // untimed calls before the timed ones
  uint32_t reps;        // timed calls (0: one untimed call whose outputs are returned)
  uint32_t device;      // DeviceKind: inputs are copied there before each call
  uint32_t n_outputs;   // nvrtc kind: outputs the runner allocates (dtype and shape below)
  int64_t flush_bytes;  // cache flush before each timed call: 0 = default, -1 = none
  // Input sets: set k is set_bytes[k] bytes from input_offset + the sizes of the sets before it;
  // together exactly input_bytes. Call c of the warm-up and timed calls uses set c % n_sets.
  uint32_t n_sets;  // 1..kMaxInputSets (more than one only with reps > 0)
  uint32_t flags;   // CallFlag bits
  // The timed calls may end before `reps` once at least stop_min_reps are timed and their median
  // is within +-stop_rel_error of itself (timing_stop.h); 0: all `reps` calls.
  uint32_t stop_min_reps;
  uint32_t reserved;
  double stop_rel_error;
  uint64_t set_bytes[kMaxInputSets];
  struct OutputSpec {
    int32_t dtype;  // c10::ScalarType
    uint32_t ndim;
    int64_t sizes[16];
  } outputs[8];
};
constexpr uint32_t kMaxOutputSpecs = 8;

constexpr int kMaxTimedReps = 1000;

enum class Timer : uint32_t { SteadyClock = 0, CudaEvent = 1 };

struct CallResultMsg {
  MsgHeader h;
  uint64_t call_id;
  uint32_t status;  // CallStatus
  uint32_t n_times;
  uint64_t output_bytes;  // bytes written into the output region: the sets' lists back to back
  uint32_t n_sets;        // the Call's, or with fewer timed calls the sets they used (min(n_sets, warmup + n_times))
  uint32_t reserved;
  uint64_t set_output_bytes[kMaxInputSets];  // per set: its encoded list (returns, then arguments)
  double times_s[kMaxTimedReps];             // per timed call, the runner's own clock (evidence, never trusted alone)
  double idle_wait_s[kMaxTimedReps];         // per timed call: end event reached -> device idle
  uint32_t timer;                            // Timer
  uint32_t evidence;                         // Evidence bits
  // Operators the submission dispatched during the calls ("aten::add"; the called op itself and
  // what runs inside those operators are not listed).
  uint32_t n_dispatched;
  char dispatched[kMaxDispatched][kDispatchedNameBytes];
  // Per return of the last call: the index of the argument whose storage it shares, or kAlias*.
  uint32_t n_return_alias;
  int32_t return_alias[kMaxReturnAlias];
  char message[4096];
};

template <typename Msg>
inline void init_header(Msg& m, MsgType t) {
  m.h.magic = kMagic;
  m.h.version = kVersion;
  m.h.type = static_cast<uint32_t>(t);
  m.h.size = sizeof(Msg);
}

template <typename Msg>
inline bool header_ok(const Msg& m, MsgType t, long received) {
  return received == static_cast<long>(sizeof(Msg)) && m.h.magic == kMagic && m.h.version == kVersion &&
         m.h.type == static_cast<uint32_t>(t) && m.h.size == sizeof(Msg);
}

}  // namespace kg::protocol

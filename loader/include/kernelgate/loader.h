// kernelgate loader: from untrusted kernel source to something the supervisor can call safely.
//
//   scan_submission()  finds the op folders of a submission (DESIGN.md, "The submission contract")
//   build()            generates the registration glue and compiles it in the sandbox's compile profile
//   RunnerClient       starts kg-runner in the sandbox's run profile and talks the protocol of
//                      protocol.h to it; everything it hands back is checked before use.
#pragma once

#include "kernelgate/aliasing.h"
#include "kernelgate/names.h"
#include "kernelgate/remove_tree.h"
#include "kernelgate/runner_evidence.h"
#include "kernelgate/sandbox.h"
#include "kernelgate/unique_fd.h"

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace kg::protocol {
struct CallMsg;
struct CallResultMsg;
}  // namespace kg::protocol

namespace kg::loader {

// python: BackendBench's `.py` kernels, run by kg-runner's embedded interpreter (CPU).
enum class Kind { Cpu, Cuda, Nvrtc, Python };
const char* kind_name(Kind k);
bool parse_kind(const std::string& name, Kind* out);  // "cpu", "cuda", "nvrtc", "python"

// "relu.default" -> "relu__default", "add_.Tensor" -> "add___Tensor".
std::string folder_for_op(const std::string& op);
// The inverse: the last "__" separates name and overload.
std::string op_for_folder(const std::string& folder);

struct OpFolder {
  std::string op;      // "relu.default"
  std::string folder;  // "relu__default", or BackendBench's "relu" (the default overload)
  std::string dir;     // absolute path of the op folder
  std::string source;  // absolute path of the kernel source
  Kind kind = Kind::Cpu;
};

struct ScanResult {
  std::vector<OpFolder> ops;
  // Folders that look like op folders but cannot be used (no source, bad name): folder -> problem.
  std::vector<std::pair<std::string, std::string>> problems;
};
// Throws std::runtime_error when `dir` is not a readable directory (`dir` itself may be a
// symbolic link; nothing inside it is followed: docs/submissions.md).
ScanResult scan_submission(const std::string& dir);

// Resolves "relu.default" to its aten schema. Throws std::runtime_error naming the op when the
// linked libtorch has no such overload.
const c10::FunctionSchema& aten_schema(const std::string& op);

// The C++ signature a kernel must have for an overload (schema argument order).
struct Signature {
  std::string return_type;
  std::vector<std::string> arg_types;
  std::vector<std::string> arg_names;
  // "at::Tensor relu__default_kernel_impl(const at::Tensor& self)"
  std::string declaration(const std::string& fn_name) const;
};
Signature cpp_signature(const c10::FunctionSchema& schema);

// The schema as registered under kernelgate's own namespace: "relu__default(Tensor self) -> Tensor".
std::string registered_schema(const c10::FunctionSchema& schema, const std::string& folder);
constexpr const char* kRegistryNamespace = "kgsub";

struct Diagnostic {
  std::string file;  // relative to the submission
  int line = 0;
  int column = 0;
  std::string severity;  // "error", "warning", "note"
  std::string message;
};

struct BuildOptions {
  std::string work_dir;         // host directory for builds when the cache is off (created)
  std::string submission_root;  // paths in diagnostics are shown relative to this
  double time_s = 120;
  uint64_t memory_mb = 4096;
  // The content-addressed build cache (docs/loader.md, "Cache"): a hit skips the compiler.
  bool use_cache = true;
  std::string cache_dir;  // default: cache_root()/builds ($KERNELGATE_CACHE)
  // The whole build cache is kept within this many bytes by evicting least recently used
  // entries after a publish; 0: $KERNELGATE_CACHE_MAX_MB, else 4 GiB.
  uint64_t cache_max_bytes = 0;
  // A build whose outputs are larger than this is used once and not cached (policy
  // limits.cache_artifact_mb).
  uint64_t cache_artifact_max_bytes = uint64_t{64} << 20;
  // Target of the cuda and nvrtc kinds: "sm_90" (H200) unless set here or by $KERNELGATE_CUDA_ARCH.
  std::string cuda_arch;
  // cuda kind: run nvcc as one process instead of its host and device chains side by side
  // (same artifact, slower; the build benchmark compares the two).
  bool nvcc_whole = false;
  // cuda kind: the source's leading includes of ATen/ATen.h (and ATen/cuda/CUDAContext.h with a
  // CUDA libtorch) join the unit's precompiled prefix; false compiles them with every build, as
  // before (the build benchmark compares the two).
  bool precompiled_includes = true;
};

struct BuildResult {
  bool ok = false;
  std::string artifact;                 // host path of the built .so (cpu, cuda), .cubin (nvrtc) or .py (python)
  std::vector<Diagnostic> diagnostics;  // capped at kMaxDiagnostics, paths relative to the submission
  std::string log;                      // compiler output, capped, paths made relative
  std::string error;                    // one-line summary when !ok
  sandbox::Record record;
  double seconds = 0;
  // Added with the cuda and nvrtc kinds:
  Kind kind = Kind::Cpu;
  bool cache_hit = false;
  std::string cache_key;  // SHA-256 of everything that changes the artifact
  // Why a cache entry of this key was found not to match the digests kernelgate recorded for
  // it and was removed (the artifact was then rebuilt); "" when none was.
  std::string cache_rejected;
  // A build too large to cache (BuildOptions::cache_artifact_max_bytes): its folder, to remove
  // once the artifact has been used (remove_uncached()); "" otherwise.
  std::string uncached_dir;
  std::string launch_file;  // nvrtc: the normalised launch table beside the cubin
  // How a cuda-kind build ran when it left its fast path or took it ("host prefix precompiled",
  // "all of ATen: ...", "nvcc whole: ...", "not cached: ..."), and for cpu and cuda whether the
  // precompiled headers cover the source's includes ("precompiled headers: ...", "outside the
  // precompiled headers: <X> ..."); for a cache hit only a toolchain entry (prelude, host prefix,
  // dry run) found altered and rebuilt.
  std::vector<std::string> notes;
  // Where a cuda-kind build's time went, as its build script timed it: (step, seconds) for glue,
  // host-chain, device-chain, host-compile (or nvcc when run whole), link, then script (first
  // mark to last; seconds minus script is the sandbox and kernelgate's own work). Empty otherwise.
  std::vector<std::pair<std::string, double>> steps;
};
constexpr size_t kMaxDiagnostics = 200;
constexpr size_t kMaxBuildLog = 64 * 1024;

BuildResult build(const OpFolder& op, const BuildOptions& options);
// Removes a build's uncached_dir (no-op when it is cached); call when the artifact is done with.
void remove_uncached(const BuildResult& built);

// What `kernelgate warmup` did for one piece of a kind's per-toolchain precompiled work (the
// shim, the precompiled prelude, nvcc's dry run, each cuda host prefix): built now or found in
// the cache, how long it took, or why it could not be built (builds then go on, slower).
struct WarmupStep {
  std::string what;    // "precompiled prelude", "cuda host prefix with <ATen/ATen.h>", ...
  std::string entry;   // its folder in the cache root ("" when none)
  bool built = false;  // false: it was already there
  double seconds = 0;
  std::string error;  // "" when it is ready
};
// Builds `kind`'s precompiled work into the cache root ahead of the first build (each build
// would otherwise build what it needs on first use), in the compile sandbox like every build.
std::vector<WarmupStep> warmup(Kind kind, const BuildOptions& options = {});

// Parses gcc style ("file:line:col: error: message") and nvcc/NVRTC (EDG) style
// ("file(line): error: message") diagnostics; `strip_prefix` is removed from file names.
std::vector<Diagnostic> parse_diagnostics(const std::string& text, const std::string& strip_prefix);
// The linker's complaint in a build log as one line ("undefined reference to 'f()' (in g())", from
// gold's or ld.bfd's output; a multiple definition likewise; else ld's or collect2's first line),
// "" when there is none. A failed build whose log has no compiler error says this instead.
std::string linker_complaint(const std::string& log);
// Every symbol a build log's linker says is undefined ("undefined reference to 'f'" of gold and
// ld.bfd, "undefined reference to symbol 'f@@lib'", lld's "undefined symbol: f"), without a
// symbol version, each once, in order. What a submission that did not link wanted to call.
std::vector<std::string> undefined_references(const std::string& log);

// Whether this kernelgate can build a kind here ("" when it can, else why not).
std::string kind_unavailable(Kind kind);

// ---- kernelgate init ------------------------------------------------------------------------

// Writes DIR/<folder>/ with a stub per op carrying the expected signature: it builds, and fails
// every test honestly (the cpu/cuda stubs throw "not implemented"; the nvrtc stub's kernel writes
// nothing). Existing files are never overwritten (listed in the returned problems instead).
struct InitResult {
  std::vector<std::string> written;                           // paths written
  std::vector<std::pair<std::string, std::string>> problems;  // op or path -> why skipped
};
InitResult write_stubs(const std::string& dir, const std::vector<std::string>& ops, Kind kind);
// The stub source (and for nvrtc the kernelgate.toml) for one op.
std::string stub_source(const std::string& op, Kind kind);
std::string stub_launch_toml(const std::string& op);

// ---- the runner -------------------------------------------------------------------------

// Where a call runs: the runner copies inputs there before the call and brings everything back.
using Device = names::Device;  // Cuda means cuda:0 of the runner's box

// What to load into a runner (extends the three-string load()).
struct LoadRequest {
  std::string artifact;       // .so (cpu, cuda), .cubin (nvrtc) or .py (python); "" = the aten overload itself
  std::string registered_op;  // "kgsub::relu__default" (cpu, cuda)
  std::string aten_op;        // "relu.default"
  Kind kind = Kind::Cpu;
  Device device = Device::Cpu;  // the runner sets the device up before its filter tightens
  // Kind::Python only: a KernelBench problem file (Model, get_inputs, get_init_inputs: the
  // reference) or solution file (ModelNew), registered as `registered_op` with the schema
  // protocol::kModelSchemaArguments instead of an aten overload's; both models are built under
  // model_seed, the solution with model_init (the problem's load says it).
  enum class Model { None, Problem, Solution } model = Model::None;
  uint64_t model_seed = 0;
  std::string model_init;
  // The op (cpu, cuda, python source) also becomes aten's own kernel for the device in the runner
  // (protocol::kLoadInstallOverAten), and the op loaded before stays the one call() calls:
  // train-check loads its model, then installs each op of the submission.
  bool install_over_aten = false;
  // With install_over_aten: at the device's Autograd key, in place of aten's derivative formula
  // (a python kernel with its own torch.autograd.Function; protocol::kLoadInstallAutograd).
  bool install_autograd = false;
  // With `artifact` "": each call differentiates the aten overload (protocol::kLoadGradient): the
  // call's inputs are the overload's arguments then a Tensor[] of weights; it returns one Tensor[].
  bool gradient = false;
  // Kind::Python op source only: list its load_inline calls instead of loading its entry
  // (protocol::kLoadListExtensions); the runner then answers ModelAction::Extensions and nothing else.
  bool list_extensions = false;
};
LoadRequest load_request(const OpFolder& op, const BuildResult& built, Device device);

// What one call can carry (the protocol's limits), for callers that size their calls.
inline constexpr int kMaxCallReps = 1000;          // CallOptions::reps
inline constexpr size_t kMaxCallInputSets = 1024;  // the inputs plus CallOptions::more_inputs
inline constexpr size_t kMaxCallDispatched = 16;   // CallOutcome::dispatched (more: DispatchedOverflow)
// Bytes `values` take encoded in a call's shared region (CallOptions::returns_bytes_hint, a
// budget of input sets).
size_t encoded_bytes(const std::vector<c10::IValue>& values);

struct CallOptions {
  int warmup = 0;  // untimed calls before the timed ones
  int reps = 0;    // timed calls (0: one untimed call)
  // The timed calls end before `reps` once at least stop_min_reps (1..reps) are timed and their
  // median is within +-stop_rel_error (0..1) of itself at 95% confidence
  // (kernelgate/timing_stop.h); 0: every one of `reps`. The sets the calls did not reach have no
  // entry in CallOutcome::more.
  int stop_min_reps = 0;
  double stop_rel_error = 0;
  Device device = Device::Cpu;
  // nvrtc kind: the reference's returns (only dtype and shape are sent), which the runner
  // allocates for the kernel to write. Ignored by the other kinds.
  std::vector<c10::IValue> output_like;
  // Cache flush before every timed call: bytes written (0 = the runner's default: 2x the GPU's
  // L2, or 256 MiB on CPU); -1 disables the flush (measuring the flush's own cost only).
  int64_t flush_bytes = 0;
  // Bytes the returns are expected to take encoded (e.g. the reference's): the output region is
  // sized for twice that on top of the inputs, so ops whose outputs dwarf their inputs fit.
  size_t returns_bytes_hint = 0;
  // Further value sets for the warm-up and timed calls to rotate through (same argument kinds,
  // shapes and dtypes as the inputs; reps > 0, at most protocol::kMaxInputSets in all, and no more
  // than warmup + reps). The returns of each set's last call come back in CallOutcome::more.
  std::vector<std::vector<c10::IValue>> more_inputs;
  // Untimed calls normally run with allocation poisoning armed; false runs the judged call in the
  // state timed calls see (a kernel must not be able to tell the two apart).
  bool poison = true;
  // With reps 0 and exactly one set in more_inputs: after the judged call on the inputs, the
  // runner writes more_inputs[0]'s values into that call's very argument buffers (every tensor at
  // its old address at once, strides and storage offsets unchanged) and calls again; that call's
  // returns and arguments come back in CallOutcome::more[0] (an output cache keyed on input
  // addresses replays there).
  bool second_set_in_place = false;
};

struct RunnerOptions {
  std::string runner_path;            // host path of kg-runner
  std::vector<std::string> ro_binds;  // artifact dirs etc., bound read-only at the same path
  sandbox::Profile profile = sandbox::Profile::RunCpu;
  sandbox::Limits limits;
  // The one GPU (host index) the runner's CUDA sees as cuda:0 (CUDA_VISIBLE_DEVICES, read by the
  // runtime when the runner initialises CUDA, before any submission code is loaded); -1: the default.
  int gpu = -1;
  // When set (an existing folder): the runner gets an empty folder of its own under it, bound
  // read-only, into which RunnerClient::stage() copies the one artifact it will load. A runner so
  // started needs no bind of the artifact's folder, so it can be started before its artifact is
  // known (RunnerPool). The folder is removed with the runner.
  std::string staging_root;
};

struct CallOutcome {
  enum class Kind { Ok, OpError, Died, Timeout, ProtocolViolation };
  Kind kind = Kind::Died;
  std::vector<c10::IValue> returns;     // the call's returns
  std::vector<c10::IValue> args_after;  // every argument after the call (tensors show mutation)
  // Per CallOptions::more_inputs set: the returns of its last call and its arguments after it.
  struct SetResult {
    std::vector<c10::IValue> returns, args_after;
  };
  std::vector<SetResult> more;
  std::vector<double> times_s;  // runner-reported per-call times (timed calls only)
  // Per timed call: how long the device took to become idle after the call's end was recorded
  // (work escaping the timed stream shows here; CPU: 0). Evidence for the supervisor.
  std::vector<double> idle_wait_s;
  std::string timer;  // "steady_clock" or "cuda_event"
  // What the runner observed around the calls (policies/runner_evidence.h), decoded once from
  // the reply's evidence bits.
  policy::ObservationSet observations;
  std::vector<std::string> dispatched;  // operators the submission dispatched ("aten::relu"), validated names
  std::vector<int32_t> return_alias;    // per return: the argument it shares storage with, or protocol::kAlias*
  double supervisor_wall_s = 0;         // the supervisor's own clock around the whole exchange
  std::string message;
  sandbox::Record record;  // filled when the runner died or was killed
  // Files the runner's box tried to open once the artifact was loading (cpu) or loaded (cuda),
  // outside the runtime's own files, refused by the sandbox (Process::watch_opens): seen by the
  // supervisor itself, not reported by the runner. Evidence for sandbox_violation.
  std::vector<sandbox::RefusedOpen> refused_opens;
};

// Why a load did not happen. `message` is what results.json shows; `kind` is what callers decide
// on (a ProtocolViolation is also the protocol_violation rule's evidence).
struct LoadError {
  enum class Kind {
    Refused,            // the runner answered: the artifact or op could not be loaded
    TimedOut,           // no answer within the runner's time limit
    Died,               // the runner was not running, or ended while loading
    ProtocolViolation,  // a message the runner never sends (malformed, out of turn)
  };
  Kind kind = Kind::Refused;
  std::string message;
};
// The message of a failed load, "" for a load that happened (for logs and tests).
inline std::string load_message(const std::optional<LoadError>& e) { return e ? e->message : std::string(); }

// One kg-runner in the sandbox's run profile. kernelgate uses one per op of a submission (ops
// share no process state; a crash costs one op's runner), serving every call of that op; a
// runner that died (alive() false) is replaced by a fresh one for the next call.

class RunnerClient {
 public:
  static std::unique_ptr<RunnerClient> start(const RunnerOptions& options);
  ~RunnerClient();

  // Loads an artifact; nothing on success, else why not. A message the runner never sends
  // (malformed, out of turn: the artifact's static constructors wrote to fd 3) is a
  // ProtocolViolation whose message starts "protocol violation while loading: ".
  // An empty `artifact` makes the runner call the aten overload `aten_op` ("relu.default") itself.
  std::optional<LoadError> load(const std::string& artifact, const std::string& registered_op, const std::string& aten_op);
  std::optional<LoadError> load(const LoadRequest& request);
  // The same; on success `said` gets what the runner's reply carries (a problem's constructor
  // arguments, LoadRequest::model_init for its solution), else "".
  std::optional<LoadError> load(const LoadRequest& request, std::string* said);
  // A runner started with RunnerOptions::staging_root: copies the artifact (and the nvrtc kind's
  // launch table beside it) into the runner's own read-only folder and returns the path to load
  // (the same inside the box); "" stays "" (the aten overload itself). Throws when the runner has
  // no staging folder or the copy fails.
  std::string stage(const std::string& artifact);
  // Before any load: sets the device up (cuda: context, flush buffer, events) and the CPU flush
  // buffer, so that a later load only loads. Nothing on success, else why not.
  std::optional<LoadError> prepare(Device device);
  // The runner's wall-clock limit counts from now (sandbox::Process::restart_clock).
  void restart_clock();
  // The runner's pid as the host sees it (distinct for every runner).
  pid_t pid() const;
  // Runs the loaded op once on `inputs` (returns come back), or with reps > 0 times it and
  // returns the last timed call's outputs.
  CallOutcome call(const std::vector<c10::IValue>& inputs, size_t n_returns, double timeout_s, int warmup = 0, int reps = 0);
  CallOutcome call(const std::vector<c10::IValue>& inputs, size_t n_returns, double timeout_s, const CallOptions& options);
  bool alive() const { return alive_; }
  // The runner's box has ended (or it was stopped) without this client having seen it yet.
  bool exited() const;
  // Asks the runner to exit and returns its record once its box is gone.
  sandbox::Record finish();
  // Asks the runner to exit and returns its record as of its answer (protocol::ShutdownDone):
  // everything it wrote and every syscall refused until then; its box is still ending (its
  // memory, a CUDA context), and the client's destruction waits for that, wherever it costs no
  // one (RunnerPool::retire). A runner that does not answer (a python runner, whose interpreter
  // writes its buffers while it ends; one that died) is waited for as by finish().
  sandbox::Record finish_answered();

 private:
  RunnerClient() = default;
  CallOutcome died(CallOutcome out, const std::string& why);
  // The steps of call(): the outcome of a call on a runner that is gone; the Call sent with its
  // region's descriptor and the reply awaited into `*reply` (the outcome when none came: timed
  // out, the channel broke, a malformed message, after which the runner is gone); the reply
  // checked (runner_reply.h) into the outcome, a breach of the protocol stopping the runner.
  CallOutcome not_running() const;
  std::optional<CallOutcome> send_and_wait(const protocol::CallMsg& m, int region_fd, double timeout_s, protocol::CallResultMsg* reply,
                                           double* wall_s);
  CallOutcome read_reply(const protocol::CallResultMsg& reply, const protocol::CallMsg& m, size_t n_args, size_t n_returns, double wall_s,
                         const uint8_t* output_region);
  // Kills the runner (when still running) and returns its record, once waited for.
  sandbox::Record stop(const std::string& why);
  // finish() and finish_answered().
  sandbox::Record end(bool wait_for_exit);
  std::unique_ptr<sandbox::Process> process_;
  // The sandbox's supervision (seccomp listener, output capture, limits) runs inside
  // Process::wait(), so a thread sits in it for the runner's whole life.
  std::future<sandbox::Record> waiter_;
  std::optional<sandbox::Record> record_;
  UniqueFd sock_;
  std::string staging_dir_;  // RunnerOptions::staging_root's folder of this runner, or ""
  bool alive_ = false;
  uint64_t next_call_ = 1;
  double timeout_s_ = 20;
};

// Exact copy of a value list: tensors get fresh storage with the same sizes, strides and values.
std::vector<c10::IValue> clone_values(const std::vector<c10::IValue>& values);

// Per return: which argument's storage it shares (kernelgate/aliasing.h).
using protocol::return_aliases;

// Host path of the kg-runner built with this kernelgate (KERNELGATE_RUNNER overrides).
std::string default_runner_path();

}  // namespace kg::loader

// The supervisor's side of the runner protocol. Everything the runner sends is checked before
// use: a malformed message or region is a ProtocolViolation, a silent runner a Timeout, and a
// dead one a Died with the sandbox's record.
#include "runner_reply.h"

#include "kernelgate/loader.h"
#include "kernelgate/mapping.h"
#include "kernelgate/prefault.h"
#include "kernelgate/protocol.h"
#include "kernelgate/unique_fd.h"
#include "kernelgate/wire.h"
#include "kg_build_config.h"

#include <ATen/ATen.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace kg::loader {
namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

template <typename Msg>
void send_msg(int sock, const Msg& m, int fd_to_pass = -1) {
  iovec iov{const_cast<Msg*>(&m), sizeof m};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))];
  if (fd_to_pass >= 0) {
    std::memset(ctrl, 0, sizeof ctrl);
    mh.msg_control = ctrl;
    mh.msg_controllen = sizeof ctrl;
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd_to_pass, sizeof(int));
  }
  ssize_t n = ::sendmsg(sock, &mh, MSG_NOSIGNAL);
  if (n != static_cast<ssize_t>(sizeof m)) throw std::runtime_error(errno_text("sendmsg to runner"));
}

// Waits for one message of type Msg. Returns false on timeout; throws on EOF or a bad message.
struct PeerGone : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct BadMessage : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename Msg>
bool recv_msg(int sock, protocol::MsgType type, Msg* out, double timeout_s) {
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{sock, POLLIN, 0};
    // At most a minute per wait (the loop goes on until the deadline): a long timing budget
    // (run_call_time_s x calls) in milliseconds does not fit poll's int.
    int r = ::poll(&p, 1, static_cast<int>(std::min(left, 60.0) * 1000) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw std::runtime_error(errno_text("poll"));
    if (r == 0) continue;
    // Any fds the runner tries to pass are refused by not offering control space, and
    // MSG_TRUNC tells us the true length of an oversized message.
    ssize_t n = ::recv(sock, out, sizeof(Msg), MSG_TRUNC);
    if (n == 0) throw PeerGone("runner closed the channel");
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET) throw PeerGone("runner closed the channel");
      throw std::runtime_error(errno_text("recv from runner"));
    }
    if (!protocol::header_ok(*out, type, n))
      throw BadMessage("malformed message from the runner (" + std::to_string(n) + " bytes, expected type " +
                       std::to_string(static_cast<int>(type)) + " of " + std::to_string(sizeof(Msg)) + ")");
    return true;
  }
}

void copy_cstr(char* dst, size_t cap, const std::string& s) {
  if (s.size() >= cap) throw std::runtime_error("string too long for the protocol: " + s);
  std::memcpy(dst, s.c_str(), s.size() + 1);
}

std::string bounded(const char* s, size_t cap) { return std::string(s, strnlen(s, cap)); }

// How a runner's box ended, from its record, as the end of "the runner ...".
std::string how_it_ended(const sandbox::Record& r) {
  switch (r.status) {
    case sandbox::Status::SG: {
      const char* abbrev = r.signal > 0 ? ::sigabbrev_np(r.signal) : nullptr;
      return "was killed by " + (abbrev ? "SIG" + std::string(abbrev) : "signal " + std::to_string(r.signal));
    }
    case sandbox::Status::RE: return "exited with code " + std::to_string(r.exit_code);
    case sandbox::Status::OK: return "exited with code 0";
    case sandbox::Status::ML: return "was killed at its memory limit (" + r.message + ")";
    case sandbox::Status::TO: return "was killed at its time limit (" + r.message + ")";
    case sandbox::Status::OL: return "was killed at its output limit (" + r.message + ")";
    case sandbox::Status::SV: return "was killed by the sandbox (" + r.message + ")";
    case sandbox::Status::XX: break;
  }
  return "ended (" + r.message + ")";
}

// A device as the protocol's messages carry it (protocol::DeviceKind).
uint32_t wire_device(Device d) {
  return static_cast<uint32_t>(d == Device::Cuda ? protocol::DeviceKind::Cuda0 : protocol::DeviceKind::Cpu);
}

// A fresh folder of one runner's own under `root` (mode 0755: the box may run as another user).
std::string make_staging_dir(const std::string& root) {
  std::string tmpl = (std::filesystem::path(root) / "runner-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error(root + ": cannot create a runner's staging folder: " + std::strerror(errno));
  if (::chmod(tmpl.c_str(), 0755) != 0) throw std::runtime_error(tmpl + ": chmod: " + std::strerror(errno));
  return tmpl;
}

// Copies `from` to `to` whole: into a temporary name beside it, then renamed (the box never sees
// half a file), readable by everyone and writable by no one.
void copy_whole(const std::filesystem::path& from, const std::filesystem::path& to) {
  const std::filesystem::path tmp = to.string() + ".part";
  std::error_code ec;
  std::filesystem::copy_file(from, tmp, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) throw std::runtime_error(from.string() + ": cannot stage into " + to.parent_path().string() + ": " + ec.message());
  std::filesystem::permissions(
      tmp, std::filesystem::perms::owner_read | std::filesystem::perms::group_read | std::filesystem::perms::others_read, ec);
  if (!ec) std::filesystem::rename(tmp, to, ec);
  if (ec) throw std::runtime_error(to.string() + ": cannot stage: " + ec.message());
}

// What a Load or a Prepare exchange says in its errors: why the runner is stopped when no answer
// came in time, the error's text then, a protocol violation's prefix, and what it was doing.
struct Exchange {
  std::string timed_out;
  std::string timed_out_message;
  std::string violation;
  std::string phase;  // "while loading the artifact"
};

// Sends a Load or a Prepare on `sock` and awaits the LoadResult that answers it; `stop` ends the
// runner and returns its record.
template <typename Msg, typename Stop>
std::optional<LoadError> answered(int sock, double timeout_s, const Msg& m, const Exchange& says, Stop stop, std::string* said = nullptr) {
  using K = LoadError::Kind;
  protocol::LoadResultMsg r{};
  try {
    send_msg(sock, m);
    if (!recv_msg(sock, protocol::MsgType::LoadResult, &r, timeout_s)) {
      auto rec = stop(says.timed_out);
      return LoadError{K::TimedOut, says.timed_out_message + " (" + std::string(sandbox::status_name(rec.status)) + ")"};
    }
  } catch (const BadMessage& e) {
    stop(e.what());
    return LoadError{K::ProtocolViolation, says.violation + std::string(e.what())};
  } catch (const std::exception& e) {
    auto rec = stop(e.what());
    return LoadError{K::Died, "the runner " + how_it_ended(rec) + " " + says.phase + " (" + e.what() + ")" +
                                  (rec.stderr_text.empty() ? "" : ": " + rec.stderr_text.substr(0, 2000))};
  }
  if (r.ok != 1) return LoadError{K::Refused, bounded(r.message, sizeof r.message)};
  if (said) *said = bounded(r.message, sizeof r.message);
  return std::nullopt;
}

}  // namespace

static_assert(kMaxCallReps == protocol::kMaxTimedReps && kMaxCallInputSets == protocol::kMaxInputSets &&
                  kMaxCallDispatched == protocol::kMaxDispatched,
              "loader.h's call limits are the protocol's");

size_t encoded_bytes(const std::vector<c10::IValue>& values) { return wire::encoded_size(values); }

std::string default_runner_path() {
  if (const char* e = std::getenv("KERNELGATE_RUNNER"); e && *e) return e;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = self.parent_path() / "kg-runner";
    if (std::filesystem::exists(beside, ec)) return beside.string();
  }
  return KG_RUNNER_PATH;
}

namespace {

// The folders of a ':'-separated path list.
[[maybe_unused]] std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::string part;
  for (const char c : path + ":") {
    if (c != ':') {
      part += c;
    } else if (!part.empty()) {
      out.push_back(part);
      part.clear();
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<RunnerClient> RunnerClient::start(const RunnerOptions& options) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) throw std::runtime_error(errno_text("socketpair"));
  UniqueFd mine(sv[0]), theirs(sv[1]);
  sandbox::Spec spec;
  spec.profile = options.profile;
  spec.argv = {options.runner_path, "--fd", std::to_string(protocol::kRunnerFd)};
  // No on-disk kernel caches: aten's jiterated CUDA ops (erfc, i0, gcd, ...) write their NVRTC
  // output under $HOME/.cache/torch/kernels and the driver writes JIT-compiled PTX (jiterator,
  // cuDNN's runtime-compiled engines) under $HOME/.nv/ComputeCache. The runner's filter forbids
  // creating files, and a cache on disk would carry state from one run to the next.
  // Two hardware work queues per CUDA context instead of the driver's eight: a context's set-up
  // and tear-down serialise in the driver, and with eight queues 16 runners at once managed 4.5
  // contexts a second on the H200, with two 8.8 (tools/context-cost.py, docs/batches.md). Calls on
  // one stream (eager's, and every kernel kernelgate times) are unaffected; only a kernel that
  // overlaps three or more streams within one call loses some of that overlap.
  spec.env = {"PATH=/usr/bin:/bin",
              "HOME=/tmp",
              "TMPDIR=/tmp",
              "OMP_NUM_THREADS=1",
              "LANG=C",
              "USE_PYTORCH_KERNEL_CACHE=0",
              "CUDA_CACHE_DISABLE=1",
              "CUDA_DEVICE_MAX_CONNECTIONS=2"};
  if (options.gpu >= 0) spec.env.push_back("CUDA_VISIBLE_DEVICES=" + std::to_string(options.gpu));
  spec.binds.push_back({std::filesystem::path(options.runner_path).parent_path().string(), false});
  for (const auto& b : options.ro_binds) spec.binds.push_back({b, false});
  std::string staging;
  if (!options.staging_root.empty()) {
    staging = make_staging_dir(options.staging_root);
    spec.binds.push_back({staging, false});
  }
  if (std::filesystem::exists(KG_TORCH_LIB_DIR)) spec.binds.push_back({KG_TORCH_LIB_DIR, false});
  // A pip PyTorch's CUDA libraries; the CUDA toolkit's runtime when it is not under /usr.
  for (const std::string& d : {std::string(KG_TORCH_EXTRA_LIB_ROOT), std::string(KG_CUDA_LIB_DIR)})
    if (!d.empty() && d.rfind("/usr/", 0) != 0 && std::filesystem::exists(d)) spec.binds.push_back({d, false});
#ifdef KG_PYTHON_MODULE_PATH
  // The python kind's module path where it lies outside /usr (a venv's site-packages, with torch's
  // and numpy's Python files): read-only in every runner, since a pool's runner is started before
  // it knows its kind.
  for (const std::string& d : split_path(KG_PYTHON_MODULE_PATH))
    if (d.rfind("/usr/", 0) != 0 && std::filesystem::is_directory(d)) spec.binds.push_back({d, false});
#endif
  spec.pass_fds = {theirs.get()};
  spec.limits = options.limits;
  spec.capture_output = true;
  // A logging pass for establishing a profile on a new machine: syscalls outside the profile are
  // listed in the record instead of killing the runner. Never for untrusted code in earnest.
  if (const char* a = std::getenv("KERNELGATE_AUDIT_RUNNER"); a && *a == '1') spec.audit_syscalls = true;
  std::unique_ptr<RunnerClient> c(new RunnerClient());
  c->staging_dir_ = staging;  // removed with the client, however start() ends
  c->process_ = sandbox::start(spec);
  c->waiter_ = std::async(std::launch::async, [p = c->process_.get()] { return p->wait(); });
  theirs.reset();
  c->sock_ = std::move(mine);
  c->alive_ = true;
  c->timeout_s_ = options.limits.wall_s;
  protocol::HelloMsg hello{};
  try {
    if (!recv_msg(c->sock_.get(), protocol::MsgType::Hello, &hello, 60)) {
      auto r = c->stop("runner did not say hello within 60 s");
      throw std::runtime_error("runner did not start: " + r.message);
    }
  } catch (const PeerGone&) {
    auto r = c->stop("runner closed its channel during start-up");
    throw std::runtime_error("the runner " + how_it_ended(r) + " during start-up (" + sandbox::status_name(r.status) + ": " + r.message +
                             ")" + (r.stderr_text.empty() ? "" : " " + r.stderr_text.substr(0, 2000)));
  }
  return c;
}

RunnerClient::~RunnerClient() {
  sock_.reset();
  stop("runner client closed");
  if (!staging_dir_.empty()) {
    std::error_code ec;
    remove_tree(staging_dir_, ec);
  }
}

bool RunnerClient::exited() const {
  return !alive_ || !waiter_.valid() || waiter_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

pid_t RunnerClient::pid() const { return process_ ? process_->pid() : -1; }

void RunnerClient::restart_clock() {
  if (process_) process_->restart_clock();
}

std::string RunnerClient::stage(const std::string& artifact) {
  if (artifact.empty()) return "";
  if (staging_dir_.empty()) throw std::runtime_error("this runner was started without a staging folder: it can load only from its binds");
  const std::filesystem::path from(artifact);
  const std::filesystem::path to = std::filesystem::path(staging_dir_) / from.filename();
  copy_whole(from, to);
  // The nvrtc kind's launch table is read from beside the cubin.
  const std::filesystem::path launch = from.parent_path() / "launch.txt";
  std::error_code ec;
  if (from.filename() != "launch.txt" && std::filesystem::is_regular_file(launch, ec))
    copy_whole(launch, std::filesystem::path(staging_dir_) / "launch.txt");
  // A python source's load_inline libraries, built by kernelgate, are looked up beside it.
  if (from.extension() == ".py") {
    for (const auto& e : std::filesystem::directory_iterator(from.parent_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("kgext-", 0) == 0 && e.path().extension() == ".so" && e.is_regular_file(ec))
        copy_whole(e.path(), std::filesystem::path(staging_dir_) / name);
    }
  }
  return to.string();
}

std::optional<LoadError> RunnerClient::prepare(Device device) {
  using K = LoadError::Kind;
  if (!alive_) return LoadError{K::Died, "runner is not running"};
  protocol::PrepareMsg m{};
  protocol::init_header(m, protocol::MsgType::Prepare);
  m.device = wire_device(device);
  return answered(sock_.get(), timeout_s_, m,
                  {"preparing the device timed out", "preparing the device timed out",
                   "protocol violation while preparing: ", "while preparing the device"},
                  [this](const std::string& why) { return stop(why); });
}

sandbox::Record RunnerClient::stop(const std::string& why) {
  alive_ = false;
  if (!process_) {
    // start() failed before the runner existed.
    sandbox::Record r;
    r.message = why;
    return r;
  }
  if (!record_ && sock_) {
    // A runner that closed its channel is already dying (a signal, the OOM killer, its own
    // exit after a device error): let the sandbox see how it ended rather than our kill.
    char c;
    ssize_t n = ::recv(sock_.get(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    bool closed = n == 0 || (n < 0 && errno == ECONNRESET);
    if (closed && waiter_.wait_for(std::chrono::seconds(2)) == std::future_status::ready) record_ = waiter_.get();
  }
  if (!record_) {
    process_->kill(why);
    record_ = waiter_.get();
  }
  return *record_;
}

std::optional<LoadError> RunnerClient::load(const std::string& artifact, const std::string& registered_op, const std::string& aten_op) {
  LoadRequest r;
  r.artifact = artifact;
  r.registered_op = registered_op;
  r.aten_op = aten_op;
  return load(r);
}

std::optional<LoadError> RunnerClient::load(const LoadRequest& req) { return load(req, nullptr); }

std::optional<LoadError> RunnerClient::load(const LoadRequest& req, std::string* said) {
  using K = LoadError::Kind;
  if (said) said->clear();
  if (!alive_) return LoadError{K::Died, "runner is not running"};
  protocol::LoadMsg m{};
  protocol::init_header(m, protocol::MsgType::Load);
  copy_cstr(m.artifact_path, sizeof m.artifact_path, req.artifact);
  copy_cstr(m.op_name, sizeof m.op_name, req.registered_op);
  // aten_schema() resolved the op before; one that is no overload name is sent as written and
  // the runner finds no schema for it.
  const auto aten = names::OpName::try_parse_unqualified(req.aten_op);
  copy_cstr(m.aten_name, sizeof m.aten_name, aten ? aten->dispatcher_name() : req.aten_op);
  copy_cstr(m.aten_overload, sizeof m.aten_overload, aten ? aten->overload() : "");
  using Model = LoadRequest::Model;
  m.kind = static_cast<uint32_t>(req.kind == Kind::Nvrtc                                    ? protocol::ArtifactKind::Cubin
                                 : req.kind == Kind::Cuda                                   ? protocol::ArtifactKind::CudaSharedObject
                                 : req.kind == Kind::Python && req.model == Model::Problem  ? protocol::ArtifactKind::PythonProblem
                                 : req.kind == Kind::Python && req.model == Model::Solution ? protocol::ArtifactKind::PythonSolution
                                 : req.kind == Kind::Python                                 ? protocol::ArtifactKind::PythonSource
                                                                                            : protocol::ArtifactKind::SharedObject);
  if (req.model_init.size() >= sizeof m.model_init) return LoadError{K::Refused, "the model's constructor arguments are too long"};
  m.model_seed = req.model_seed;
  copy_cstr(m.model_init, sizeof m.model_init, req.model_init);
  m.device = wire_device(req.device);
  m.flags = (req.install_over_aten ? protocol::kLoadInstallOverAten : 0) | (req.gradient ? protocol::kLoadGradient : 0) |
            (req.install_autograd ? protocol::kLoadInstallAutograd : 0) | (req.list_extensions ? protocol::kLoadListExtensions : 0);
  // A python source's interpreter starts first, unwatched: importing torch probes library paths
  // (a pip PyTorch's RPATHs) that are none of the source's doing.
  if (req.kind == Kind::Python) {
    protocol::PrepareMsg p{};
    protocol::init_header(p, protocol::MsgType::Prepare);
    p.device = wire_device(req.device);
    p.flags = protocol::kPrepareStartPython;
    if (auto e = answered(sock_.get(), timeout_s_, p,
                          {"starting the python interpreter timed out", "starting the python interpreter timed out",
                           "protocol violation while starting the python interpreter: ", "while starting the python interpreter"},
                          [this](const std::string& why) { return stop(why); }))
      return e;
  }
  // From here on every file the box opens is checked (sandbox.h): for a cpu load from the
  // artifact's own static constructors on; on cuda:0 once the driver's set-up in the Load is done.
  const bool watch_after_load = req.device == Device::Cuda;
  if (!watch_after_load) process_->watch_opens();
  std::optional<LoadError> error = answered(
      sock_.get(), timeout_s_, m,
      {"loading the artifact timed out", "loading timed out", "protocol violation while loading: ", "while loading the artifact"},
      [this](const std::string& why) { return stop(why); }, said);
  if (watch_after_load && (!error || error->kind == K::Refused)) process_->watch_opens();
  return error;
}

CallOutcome RunnerClient::died(CallOutcome out, const std::string& why) {
  out.record = stop(why);
  if (out.message.empty()) out.message = why;
  return out;
}

CallOutcome RunnerClient::call(const std::vector<c10::IValue>& inputs, size_t n_returns, double timeout_s, int warmup, int reps) {
  CallOptions o;
  o.warmup = warmup;
  o.reps = reps;
  return call(inputs, n_returns, timeout_s, o);
}

namespace {

// The call's shared region: the input sets back to back, then room for the outputs.
struct CallRegion {
  UniqueFd fd;
  Mapping map;
  std::vector<size_t> set_bytes;  // per input set, as written
  size_t input_bytes = 0;         // the input sets as written
  size_t input_room = 0;          // their encoded sizes: where the output region starts
  size_t output_capacity = 0;
};

// Throws std::invalid_argument for a call the protocol cannot carry.
void check_call_options(const std::vector<c10::IValue>& inputs, const CallOptions& options) {
  const int warmup = options.warmup, reps = options.reps;
  if (reps < 0 || reps > protocol::kMaxTimedReps) throw std::invalid_argument("reps out of range");
  if (warmup < 0) throw std::invalid_argument("warmup out of range");
  if (options.output_like.size() > protocol::kMaxOutputSpecs) throw std::invalid_argument("more outputs than the protocol carries");
  const size_t n_sets = 1 + options.more_inputs.size();
  if (n_sets > protocol::kMaxInputSets) throw std::invalid_argument("more input sets than the protocol carries");
  if (options.second_set_in_place) {
    if (n_sets != 2 || reps != 0 || warmup != 0)
      throw std::invalid_argument("an in-place call takes exactly one more input set, no warm-up and no timed calls");
  } else if (n_sets > 1 && (reps == 0 || n_sets > static_cast<size_t>(warmup + reps))) {
    throw std::invalid_argument("input sets need timed calls, at least one call per set");
  }
  for (const auto& more : options.more_inputs)
    if (more.size() != inputs.size()) throw std::invalid_argument("an input set with another number of arguments");
  if (options.stop_rel_error != 0 || options.stop_min_reps != 0) {
    if (!(options.stop_rel_error > 0 && options.stop_rel_error < 1)) throw std::invalid_argument("stop_rel_error out of range");
    if (options.stop_min_reps < 1 || options.stop_min_reps > reps) throw std::invalid_argument("stop_min_reps out of range");
  }
}

// A sealed memfd holding every input set, sized for the outputs too.
CallRegion write_inputs(const std::vector<c10::IValue>& inputs, const CallOptions& options) {
  std::vector<const std::vector<c10::IValue>*> sets = {&inputs};
  for (const auto& more : options.more_inputs) sets.push_back(&more);
  CallRegion region;
  for (const auto* set : sets) region.input_room += region.set_bytes.emplace_back(wire::encoded_size(*set));
  // Room per set for the returns (twice the caller's hint, or up to twice the inputs), every
  // argument after the call, and slack.
  region.output_capacity = region.input_room * 3 + sets.size() * 2 * options.returns_bytes_hint + (16u << 20);
  const size_t arena = region.input_room + region.output_capacity;
  region.fd = UniqueFd(::memfd_create("kg-call", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!region.fd) throw std::runtime_error(errno_text("memfd_create"));
  if (::ftruncate(region.fd.get(), static_cast<off_t>(arena)) != 0) throw std::runtime_error(errno_text("ftruncate"));
  // Sealed against resizing so neither side can make the other's mapping fault.
  ::fcntl(region.fd.get(), F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
  region.map = Mapping(::mmap(nullptr, arena, PROT_READ | PROT_WRITE, MAP_SHARED, region.fd.get(), 0), arena);
  if (!region.map) throw std::runtime_error(errno_text("mmap"));
  protocol::prefault_for_writing(region.map.data(), 0, region.input_room);  // a hint (kernelgate/prefault.h)
  for (size_t k = 0; k < sets.size(); ++k) {
    region.set_bytes[k] = wire::encode(*sets[k], region.map.data() + region.input_bytes, region.input_room - region.input_bytes);
    region.input_bytes += region.set_bytes[k];
  }
  return region;
}

// nvrtc kind: the dtype and sizes of each output the runner allocates.
void add_output_specs(protocol::CallMsg& m, const std::vector<c10::IValue>& output_like) {
  for (const auto& v : output_like) {
    auto& spec = m.outputs[m.n_outputs++];
    if (!v.isTensor() || !v.toTensor().defined() || v.toTensor().dim() > 16)
      throw std::invalid_argument("output_like holds a value that is not a defined tensor of at most 16 dims");
    const at::Tensor& t = v.toTensor();
    spec.dtype = static_cast<int32_t>(t.scalar_type());
    spec.ndim = static_cast<uint32_t>(t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) spec.sizes[d] = t.size(d);
  }
}

std::unique_ptr<protocol::CallMsg> call_message(uint64_t call_id, const CallRegion& region, const CallOptions& options) {
  auto m = std::make_unique<protocol::CallMsg>();
  protocol::init_header(*m, protocol::MsgType::Call);
  m->call_id = call_id;
  m->arena_bytes = region.input_room + region.output_capacity;
  m->input_offset = 0;
  m->input_bytes = region.input_bytes;
  m->output_offset = region.input_room;
  m->output_capacity = region.output_capacity;
  m->warmup = static_cast<uint32_t>(options.warmup);
  m->reps = static_cast<uint32_t>(options.reps);
  m->device = wire_device(options.device);
  m->flush_bytes = options.flush_bytes;
  m->n_sets = static_cast<uint32_t>(region.set_bytes.size());
  m->stop_min_reps = static_cast<uint32_t>(options.stop_min_reps);
  m->stop_rel_error = options.stop_rel_error;
  m->flags = (options.poison ? 0u : static_cast<uint32_t>(protocol::kCallNoPoison)) |
             (options.second_set_in_place ? static_cast<uint32_t>(protocol::kCallSecondSetInPlace) : 0u);
  for (size_t k = 0; k < region.set_bytes.size(); ++k) m->set_bytes[k] = region.set_bytes[k];
  add_output_specs(*m, options.output_like);
  return m;
}

}  // namespace

CallOutcome RunnerClient::call(const std::vector<c10::IValue>& inputs, size_t n_returns, double timeout_s, const CallOptions& options) {
  if (!alive_) return not_running();
  check_call_options(inputs, options);
  const CallRegion region = write_inputs(inputs, options);
  const std::unique_ptr<protocol::CallMsg> m = call_message(next_call_++, region, options);
  auto reply = std::make_unique<protocol::CallResultMsg>();
  double wall_s = 0;
  std::optional<CallOutcome> lost = send_and_wait(*m, region.fd.get(), timeout_s, reply.get(), &wall_s);
  CallOutcome out =
      lost ? std::move(*lost) : read_reply(*reply, *m, inputs.size(), n_returns, wall_s, region.map.data() + m->output_offset);
  out.refused_opens = process_->take_refused_opens();
  return out;
}

CallOutcome RunnerClient::not_running() const {
  CallOutcome out;
  out.kind = CallOutcome::Kind::Died;
  out.message = "runner is not running";
  if (record_) {
    out.record = *record_;
    out.message += ": it " + how_it_ended(*record_) + " earlier";
  }
  return out;
}

std::optional<CallOutcome> RunnerClient::send_and_wait(const protocol::CallMsg& m, int region_fd, double timeout_s,
                                                       protocol::CallResultMsg* reply, double* wall_s) {
  CallOutcome out;
  const auto t0 = Clock::now();
  try {
    send_msg(sock_.get(), m, region_fd);
    const bool got = recv_msg(sock_.get(), protocol::MsgType::CallResult, reply, timeout_s);
    *wall_s = out.supervisor_wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (got) return std::nullopt;
    out.kind = CallOutcome::Kind::Timeout;
    return died(std::move(out), "call exceeded its time limit of " + std::to_string(timeout_s) + " s");
  } catch (const BadMessage& e) {
    out.kind = CallOutcome::Kind::ProtocolViolation;
    out.message = e.what();
    return died(std::move(out), e.what());
  } catch (const std::exception& e) {
    // The channel broke (a send into a closed socket, or EOF): the record says how the box ended.
    out.kind = CallOutcome::Kind::Died;
    out = died(std::move(out), e.what());
    out.message =
        "the runner " + how_it_ended(out.record) + (m.reps > 0 ? " during the timed calls" : " during the call") + " (" + e.what() + ")";
    return out;
  }
}

CallOutcome RunnerClient::read_reply(const protocol::CallResultMsg& reply, const protocol::CallMsg& m, size_t n_args, size_t n_returns,
                                     double wall_s, const uint8_t* output_region) {
  ReplyExpectation expect;
  expect.call_id = m.call_id;
  expect.reps = m.reps;
  expect.warmup = m.warmup;
  expect.stop_min_reps = m.stop_min_reps;
  expect.stop_rel_error = m.stop_rel_error;
  expect.n_sets = m.n_sets;
  expect.n_args = n_args;
  expect.n_returns = n_returns;
  expect.supervisor_wall_s = wall_s;
  CheckedReply checked = check_call_reply(reply, expect, output_region, m.output_capacity);
  CallOutcome out = std::move(checked.outcome);
  if (checked.violation) {
    out.kind = CallOutcome::Kind::ProtocolViolation;
    out.message = checked.violation->message;
    return died(std::move(out), checked.violation->message);
  }
  // A device error: the runner exits after replying (its CUDA context is unusable).
  if (out.kind == CallOutcome::Kind::Died) {
    const std::string why = out.message;
    return died(std::move(out), why);
  }
  return out;
}

sandbox::Record RunnerClient::finish() { return end(true); }

// Under KERNELGATE_AUDIT_RUNNER the record is the whole box's, its teardown's syscalls included.
sandbox::Record RunnerClient::finish_answered() { return end(std::getenv("KERNELGATE_AUDIT_RUNNER") != nullptr); }

sandbox::Record RunnerClient::end(bool wait_for_exit) {
  if (alive_) {
    protocol::MsgHeader h{protocol::kMagic, protocol::kVersion, static_cast<uint32_t>(protocol::MsgType::Shutdown), sizeof h};
    ::send(sock_.get(), &h, sizeof h, MSG_NOSIGNAL);
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    protocol::ShutdownDoneMsg done{};
    bool answered = false;
    try {
      answered = recv_msg(sock_.get(), protocol::MsgType::ShutdownDone, &done, 2.0);
    } catch (const std::exception&) {
      // Closed without an answer (a python runner, one that died) or out of turn: waited for below.
    }
    if (answered && !wait_for_exit) {
      alive_ = false;
      return process_->snapshot();
    }
    // Give it a moment to exit by itself (the channel closes), then the sandbox's kill.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{sock_.get(), POLLIN, 0};
    if (left > 0) ::poll(&p, 1, static_cast<int>(left));
    if (!record_ && waiter_.wait_for(std::chrono::milliseconds(500)) == std::future_status::ready) record_ = waiter_.get();
  }
  sandbox::Record rec = stop("shutdown");
  if (std::getenv("KERNELGATE_AUDIT_RUNNER")) {
    std::fprintf(stderr, "kernelgate: runner record: %s\n", rec.to_json().c_str());
    if (!rec.stderr_text.empty()) std::fprintf(stderr, "kernelgate: runner stderr:\n%s\n", rec.stderr_text.c_str());
  }
  return rec;
}

}  // namespace kg::loader

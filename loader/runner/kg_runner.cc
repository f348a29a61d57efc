// kg-runner: the only process that ever executes submission code. It runs inside the sandbox's
// run profile, loads one artifact at a time, and answers Call messages on fd 3 (protocol.h).
// It reports; it never decides: the supervisor re-checks everything it sends.
//
//   start      say Hello
//   Load       set up the device (cuda: context, flush buffer, events), tighten the seccomp
//              filter, then load the artifact: dlopen (cpu, cuda) or the driver's module loader
//              (nvrtc) — the first untrusted code runs only after the filter is tight
//   Call       decode a fresh copy of the inputs for every call (no call sees another's
//              mutations), move them to the device, warm up, then per timed call: flush caches,
//              time the call (CUDA events on the runner's stream, or the monotonic clock),
//              wait for the device to be idle; encode returns and post-call arguments
//   Shutdown   exit
#include "kernelgate/protocol.h"
#include "kernelgate/sandbox.h"
#include "kernelgate/wire.h"
#include "instrument.h"
#include "runner.h"
#include "util.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include <dirent.h>
#include <dlfcn.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace kg;

int g_sock = protocol::kRunnerFd;

template <typename Msg>
bool send_msg(const Msg& m) {
  return ::send(g_sock, &m, sizeof m, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof m);
}

void set_message(char* dst, size_t cap, const std::string& s) {
  size_t n = std::min(cap - 1, s.size());
  std::memcpy(dst, s.data(), n);
  dst[n] = 0;
}

// cpu and cuda kinds (and the aten overload itself): a dispatcher op, called boxed.
class DispatcherOp : public runner::Op {
 public:
  explicit DispatcherOp(c10::OperatorHandle h) : h_(std::move(h)), n_(h_.schema().returns().size()) {}
  size_t n_returns() const override { return n_; }
  std::vector<c10::IValue> run(std::vector<c10::IValue>& args) override {
    c10::Stack stack(args.begin(), args.end());
    h_.callBoxed(&stack);
    return std::vector<c10::IValue>(stack.begin(), stack.end());
  }

 private:
  c10::OperatorHandle h_;
  size_t n_;
};

std::unique_ptr<runner::Op> g_op;
std::string g_called_name;  // the dispatcher's name for the loaded op ("" for nvrtc: no dispatch)
bool g_submission = false;  // false: self-check, the runner calls the aten overload itself
bool g_host_code = false;   // a cpu or cuda shared object: the submission's own code calls the device
uint32_t g_call_no = 0;
bool g_tightened = false;
bool g_cuda = false;

// ---- CPU cache flush: a walk that writes one byte per cache line of a buffer larger than the LLC.
std::vector<uint8_t> g_cpu_flush;
uint32_t cpu_flush(int64_t bytes) {
  if (bytes < 0) return 0;
  size_t want = bytes == 0 ? loader::cpu_flush_default_bytes() : static_cast<size_t>(std::min<int64_t>(bytes, int64_t{1} << 32));
  if (g_cpu_flush.size() < want) {
    try {
      g_cpu_flush.assign(want, 0);
    } catch (const std::bad_alloc&) {
      g_cpu_flush.clear();
      return protocol::kEvidenceFlushSkipped;
    }
  }
  static uint8_t counter = 0;
  ++counter;
  volatile uint8_t* p = g_cpu_flush.data();
  for (size_t i = 0; i < want; i += 64) p[i] = static_cast<uint8_t>(p[i] + counter);
  return 0;
}

size_t thread_count() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

// Whether the process has more threads than `before` and keeps them for a grace period. A thread
// the call joined can still be listed for a moment: the join returns when the thread's tid is
// cleared, before the kernel drops it from /proc/self/task (legit kernels that join their threads
// were flagged under load). One still there after 20 ms was left running.
bool threads_left_running(size_t before) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (thread_count() > before) {
    if (std::chrono::steady_clock::now() >= deadline) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

void handle_load(const protocol::LoadMsg& m) {
  protocol::LoadResultMsg r{};
  protocol::init_header(r, protocol::MsgType::LoadResult);
  auto reply = [&](const std::string& msg) {
    set_message(r.message, sizeof r.message, msg);
    send_msg(r);
  };
  std::string path(m.artifact_path, strnlen(m.artifact_path, sizeof m.artifact_path));
  std::string name(m.op_name, strnlen(m.op_name, sizeof m.op_name));
  std::string aten_name(m.aten_name, strnlen(m.aten_name, sizeof m.aten_name));
  std::string aten_overload(m.aten_overload, strnlen(m.aten_overload, sizeof m.aten_overload));
  if (aten_overload == "default") aten_overload.clear();
  const auto kind = static_cast<protocol::ArtifactKind>(m.kind);
  const auto device = static_cast<protocol::DeviceKind>(m.device);
  if (m.kind > 2 || m.device > 1) return reply("bad load message");
  // The device is set up while the filter still allows it (driver threads, mappings).
  if (device == protocol::DeviceKind::Cuda0 || kind == protocol::ArtifactKind::Cubin) {
#if KG_RUNNER_CUDA
    if (!g_cuda) {
      std::string err = runner::cuda_setup();
      if (!err.empty()) return reply("cannot set up cuda:0: " + err);
      g_cuda = true;
    }
#else
    return reply(std::string("this kg-runner was built against a libtorch without CUDA (") + TORCH_VERSION +
                 "): " + (kind == protocol::ArtifactKind::Cubin ? "nvrtc artifacts" : "cuda calls") + " cannot run here");
#endif
  }
  if (g_cpu_flush.empty()) cpu_flush(0);  // the flush buffer, before the filter tightens
  // The artifact's static constructors are the first untrusted code: from here on the tighter
  // filter applies (no exec, no sockets, no new processes).
  if (!g_tightened) {
    std::string err = sandbox::tighten_runner_filter(g_cuda ? sandbox::Profile::RunCuda : sandbox::Profile::RunCpu);
    if (!err.empty()) return reply("cannot tighten the runner's filter: " + err);
    g_tightened = true;
  }
  g_op.reset();
  g_called_name.clear();
  g_submission = !path.empty();
  g_host_code = g_submission && kind != protocol::ArtifactKind::Cubin;
  if (kind == protocol::ArtifactKind::Cubin) {
#if KG_RUNNER_CUDA
    try {
      g_op = runner::load_nvrtc(path, aten_name, aten_overload);
    } catch (const std::exception& e) {
      return reply(std::string("cannot load the nvrtc artifact: ") + e.what());
    }
    r.ok = 1;
    return reply("");
#endif
  }
  // An empty artifact path loads no submission code: the runner calls the aten overload itself
  // (self-check, and eager timed in a runner like any candidate).
  std::string overload;
  if (!path.empty()) {
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = ::dlerror();
      return reply(std::string("dlopen failed: ") + (e ? e : "?"));
    }
  } else {
    name = aten_name;
    overload = aten_overload;
  }
  try {
    auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), overload.c_str());
    g_op = std::make_unique<DispatcherOp>(handle);
    g_called_name = handle.schema().name();
    r.ok = 1;
    reply("");
  } catch (const std::exception& e) {
    reply(std::string("the artifact did not register ") + name + ": " + e.what());
  }
}

// Receives a message and the memfd a Call carries.
bool recv_call(int* fd, ssize_t* n_out, void* buf, size_t cap) {
  iovec iov{buf, cap};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))];
  mh.msg_control = ctrl;
  mh.msg_controllen = sizeof ctrl;
  ssize_t n = ::recvmsg(g_sock, &mh, MSG_CMSG_CLOEXEC);
  *n_out = n;
  *fd = -1;
  if (n <= 0) return false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(fd, CMSG_DATA(c), sizeof(int));
  return true;
}

// Returns false when the runner must exit after replying (device error).
bool handle_call(const protocol::CallMsg& m, int fd) {
  auto r = std::make_unique<protocol::CallResultMsg>();
  protocol::init_header(*r, protocol::MsgType::CallResult);
  r->call_id = m.call_id;
  r->status = static_cast<uint32_t>(protocol::CallStatus::BadInput);
  void* p = MAP_FAILED;
  if (fd >= 0 && m.arena_bytes > 0 && m.input_offset <= m.arena_bytes && m.input_bytes <= m.arena_bytes - m.input_offset &&
      m.output_offset <= m.arena_bytes && m.output_capacity <= m.arena_bytes - m.output_offset && m.n_outputs <= protocol::kMaxOutputSpecs)
    p = ::mmap(nullptr, m.arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd >= 0) ::close(fd);
  const bool on_cuda = m.device == static_cast<uint32_t>(protocol::DeviceKind::Cuda0);
  // Input sets: at least one, exactly covering the input region; more than one only for timed
  // calls, and no more than there are calls.
  const uint32_t n_sets = m.n_sets;
  bool sets_ok = n_sets >= 1 && n_sets <= protocol::kMaxInputSets && (n_sets == 1 || (m.reps > 0 && n_sets <= uint64_t{m.warmup} + m.reps));
  std::vector<size_t> set_offset(sets_ok ? n_sets : 0);  // from input_offset
  uint64_t sets_total = 0;
  for (uint32_t k = 0; sets_ok && k < n_sets; ++k) {
    sets_ok = m.set_bytes[k] <= m.input_bytes - sets_total;
    set_offset[k] = sets_total;
    sets_total += sets_ok ? m.set_bytes[k] : 0;
  }
  sets_ok = sets_ok && sets_total == m.input_bytes;
  std::string bad = !g_op ? "no op loaded" : p == MAP_FAILED ? "bad call region" : !sets_ok ? "bad input sets"
                    : (on_cuda && !g_cuda) ? "cuda:0 was not set up at load" : "";
  if (!bad.empty()) {
    set_message(r->message, sizeof r->message, bad);
    send_msg(*r);
    if (p != MAP_FAILED) ::munmap(p, m.arena_bytes);
    return true;
  }
  auto* base = static_cast<uint8_t*>(p);
  bool keep_running = true;
  try {
    c10::InferenceMode guard;
    const uint32_t reps = std::min<uint32_t>(m.reps, protocol::kMaxTimedReps);
    // Per input set: its arguments and the returns of its latest call.
    std::vector<std::vector<c10::IValue>> set_args(n_sets), set_out(n_sets);
    auto decode_set = [&](uint32_t k) { return kg::wire::decode(base + m.input_offset + set_offset[k], m.set_bytes[k]); };
    r->timer = static_cast<uint32_t>(on_cuda ? protocol::Timer::CudaEvent : protocol::Timer::SteadyClock);
    // Every call gets its own exact copy of its set's inputs, decoded outside the timed region,
    // so no call sees another's mutations, and consecutive calls see different values when the
    // supervisor sent several sets.
    // On cuda:0 the inputs cross to the device once; each call then gets device-side copies.
    std::vector<std::vector<c10::IValue>> on_device(n_sets);
#if KG_RUNNER_CUDA
    if (on_cuda)
      for (uint32_t k = 0; k < n_sets; ++k) {
        on_device[k] = decode_set(k);
        runner::to_cuda(on_device[k]);
      }
#endif
    // judged: the untimed call whose outputs go back to be judged; only it pays for the wait
    // that shows work left running after the call returned.
    auto one_call = [&](bool timed, bool judged, uint32_t k) {
      std::vector<c10::IValue>& args = set_args[k];
      std::vector<c10::IValue>& out = set_out[k];
      // On cuda:0 the set's previous tensors go back to the caching allocator before this call.
      // On the CPU they stay until this call has returned: freed first, a large output comes back
      // as fresh pages and the call pays their page faults (21x a bare loop for relu over 1M
      // elements in bench_timing_overhead); freed inside the timed region, the call pays for
      // unmapping them (milliseconds for tens of MB).
      if (on_cuda) {
        out.clear();
        args.clear();
      }
#if KG_RUNNER_CUDA
      if (on_cuda) args = runner::cuda_fresh_copies(on_device[k]);
      else
#endif
        args = decode_set(k);
      g_op->prepare(args, m);
      if (!timed) {
        const size_t threads_before = thread_count();
        const bool poison = !on_cuda && !(m.flags & protocol::kCallNoPoison);
        runner::CallWatch watch(++g_call_no, g_called_name, g_submission, poison);
#if KG_RUNNER_CUDA
        // no_device_work: the submission's host code on cuda:0 must queue some device work.
        std::optional<runner::DeviceWorkWatch> device_work;
        if (on_cuda && g_host_code) device_work.emplace();
        if (on_cuda) r->evidence |= runner::cuda_untimed([&] { out = g_op->run(args); });
        else
#endif
          out = g_op->run(args);
#if KG_RUNNER_CUDA
        if (device_work && device_work->finish() == 0 && runner::holds_elements(out))
          r->evidence |= protocol::kEvidenceNoDeviceWork;
#endif
        std::optional<runner::Snapshot> after_return;
        if (judged && !on_cuda) {
          std::vector<c10::IValue> all(out);
          all.insert(all.end(), args.begin(), args.end());
          after_return.emplace(all);
        }
        r->evidence |= watch.finish();
        // A thread the call left behind may still be starting: it gets a longer window.
        const auto window = std::chrono::microseconds(thread_count() > threads_before ? 20000 : 3000);
        if (after_return && after_return->changes_within(window)) r->evidence |= protocol::kEvidenceOutputsChangedAfterReturn;
        g_op->finish(args);
        return;
      }
      double t = 0, idle = 0;
      uint32_t ev = 0;
      size_t threads_before = thread_count();
      runner::CallWatch watch(++g_call_no, g_called_name, g_submission, false);
      if (on_cuda) {
#if KG_RUNNER_CUDA
        ev |= runner::cuda_before_timed(m.flush_bytes);
        runner::CudaTimes ct = runner::cuda_timed([&] { out = g_op->run(args); });
        t = ct.call_s;
        idle = ct.idle_wait_s;
        ev |= ct.evidence;
#endif
      } else {
        ev |= cpu_flush(m.flush_bytes);
        auto t0 = std::chrono::steady_clock::now();
        std::vector<c10::IValue> result = g_op->run(args);
        t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        out = std::move(result);  // the set's previous outputs are freed here, outside the timed region
      }
      ev |= watch.finish();
      if (threads_left_running(threads_before)) ev |= protocol::kEvidenceThreadsLeftRunning;
      g_op->finish(args);
      r->evidence |= ev;
      r->times_s[r->n_times] = t;
      r->idle_wait_s[r->n_times] = idle;
      ++r->n_times;
    };
    uint32_t c = 0;
    for (uint32_t i = 0; i < m.warmup; ++i) one_call(false, false, c++ % n_sets);
    if (reps == 0) one_call(false, true, 0);
    for (uint32_t i = 0; i < reps; ++i) one_call(true, false, c++ % n_sets);
    for (const auto& out : set_out)
      if (out.size() != g_op->n_returns()) throw std::runtime_error("op returned " + std::to_string(out.size()) + " values");
    const uint32_t last = reps == 0 ? 0 : (c - 1) % n_sets;
    runner::report_aliasing(set_out[last], set_args[last], *r);
    try {
      // Per set: the returns of its last call, then its arguments after that call. encode()
      // copies device tensors back to the CPU.
      r->n_sets = n_sets;
      uint64_t written = 0;
      for (uint32_t k = 0; k < n_sets; ++k) {
        std::vector<c10::IValue> values = set_out[k];
        values.insert(values.end(), set_args[k].begin(), set_args[k].end());
        r->evidence |= runner::settle_bool_poison(values);
        r->set_output_bytes[k] = kg::wire::encode(values, base + m.output_offset + written, m.output_capacity - written);
        written += r->set_output_bytes[k];
      }
      r->output_bytes = written;
      r->status = static_cast<uint32_t>(protocol::CallStatus::Ok);
    } catch (const kg::wire::WireError& e) {
      r->status = static_cast<uint32_t>(protocol::CallStatus::OutputTooLarge);
      set_message(r->message, sizeof r->message, e.what());
    }
  } catch (const runner::DeviceError& e) {
    r->status = static_cast<uint32_t>(protocol::CallStatus::DeviceError);
    set_message(r->message, sizeof r->message, e.what());
    keep_running = false;
  } catch (const std::exception& e) {
    r->status = static_cast<uint32_t>(protocol::CallStatus::Exception);
    std::string what = e.what();
#if KG_RUNNER_CUDA
    // A CUDA error surfacing as an exception (c10::Error from a kernel's checks) may leave a
    // sticky error behind: then the context is unusable and this runner must go.
    if (on_cuda) {
      try {
        runner::cuda_check_idle("after the op's exception");
      } catch (const runner::DeviceError& de) {
        r->status = static_cast<uint32_t>(protocol::CallStatus::DeviceError);
        what += std::string(" / ") + de.what();
        keep_running = false;
      }
    }
#endif
    set_message(r->message, sizeof r->message, what);
  }
  runner::observer_report(*r);
  ::munmap(p, m.arena_bytes);
  send_msg(*r);
  return keep_running;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--fd") == 0) g_sock = std::atoi(argv[2]);
  // The steady state of a long-running PyTorch process: blocks up to 32 MiB (glibc's maximum
  // threshold) come from the heap and freed ones stay mapped for the next call, instead of every
  // call mapping fresh pages and paying their page faults (relu over 1M elements took 16x a bare
  // loop under glibc's initial thresholds in bench_timing_overhead). Candidate and eager alike.
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 512 << 20);
  runner::observer_install();  // before any artifact's code can run
  protocol::HelloMsg hello{};
  protocol::init_header(hello, protocol::MsgType::Hello);
  hello.pid = ::getpid();
  set_message(hello.torch_version, sizeof hello.torch_version, TORCH_VERSION);
  if (!send_msg(hello)) {
    std::fprintf(stderr, "kg-runner: cannot talk on fd %d: %s\n", g_sock, std::strerror(errno));
    return 3;
  }
  std::vector<unsigned char> buf(std::max({sizeof(protocol::LoadMsg), sizeof(protocol::CallMsg), sizeof(protocol::CallResultMsg)}));
  while (true) {
    int fd = -1;
    ssize_t n = 0;
    if (!recv_call(&fd, &n, buf.data(), buf.size())) return 0;  // supervisor gone
    protocol::MsgHeader h{};
    if (static_cast<size_t>(n) < sizeof h) return 4;
    std::memcpy(&h, buf.data(), sizeof h);
    if (h.magic != protocol::kMagic || h.version != protocol::kVersion) return 4;
    switch (static_cast<protocol::MsgType>(h.type)) {
      case protocol::MsgType::Load: {
        if (fd >= 0) ::close(fd);
        if (static_cast<size_t>(n) != sizeof(protocol::LoadMsg)) return 4;
        auto m = std::make_unique<protocol::LoadMsg>();
        std::memcpy(m.get(), buf.data(), sizeof *m);
        handle_load(*m);
        break;
      }
      case protocol::MsgType::Call: {
        if (static_cast<size_t>(n) != sizeof(protocol::CallMsg)) return 4;
        auto m = std::make_unique<protocol::CallMsg>();
        std::memcpy(m.get(), buf.data(), sizeof *m);
        if (!handle_call(*m, fd)) return 5;  // device error: the context is gone
        break;
      }
      case protocol::MsgType::Shutdown:
        return 0;
      default:
        return 4;
    }
  }
}

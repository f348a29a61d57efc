// kg-runner: the only process that ever executes submission code. It runs inside the sandbox's
// run profile, loads one artifact at a time, and answers Call messages on fd 3 (protocol.h).
// It reports; it never decides: the supervisor re-checks everything it sends.
#include "kernelgate/protocol.h"
#include "kernelgate/sandbox.h"
#include "kernelgate/wire.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
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

struct Loaded {
  c10::optional<c10::OperatorHandle> op;
  size_t n_returns = 0;
};

Loaded g_loaded;
bool g_tightened = false;

void handle_load(const protocol::LoadMsg& m) {
  protocol::LoadResultMsg r{};
  protocol::init_header(r, protocol::MsgType::LoadResult);
  std::string path(m.artifact_path, strnlen(m.artifact_path, sizeof m.artifact_path));
  std::string name(m.op_name, strnlen(m.op_name, sizeof m.op_name));
  // The artifact's static constructors are the first untrusted code: from here on the tighter
  // filter applies (no exec, no sockets, no new processes).
  if (!g_tightened) {
    std::string err = sandbox::tighten_runner_filter(sandbox::Profile::RunCpu);
    if (!err.empty()) {
      set_message(r.message, sizeof r.message, "cannot tighten the runner's filter: " + err);
      send_msg(r);
      return;
    }
    g_tightened = true;
  }
  // An empty artifact path loads no submission code: the runner calls the aten overload itself
  // (self-check, and eager timed in a runner like any candidate).
  if (!path.empty()) {
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = ::dlerror();
      set_message(r.message, sizeof r.message, std::string("dlopen failed: ") + (e ? e : "?"));
      send_msg(r);
      return;
    }
  } else {
    name = std::string(m.aten_name, strnlen(m.aten_name, sizeof m.aten_name));
  }
  std::string overload = path.empty() ? std::string(m.aten_overload, strnlen(m.aten_overload, sizeof m.aten_overload)) : "";
  if (overload == "default") overload.clear();
  try {
    auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), overload.c_str());
    g_loaded.op = handle;
    g_loaded.n_returns = handle.schema().returns().size();
    r.ok = 1;
  } catch (const std::exception& e) {
    set_message(r.message, sizeof r.message, std::string("the artifact did not register ") + name + ": " + e.what());
  }
  send_msg(r);
}

// Receives a Call and its memfd.
bool recv_call(protocol::CallMsg* m, int* fd, ssize_t* n_out, void* buf, size_t cap) {
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
  if (static_cast<size_t>(n) == sizeof *m) std::memcpy(m, buf, sizeof *m);
  return true;
}

void handle_call(const protocol::CallMsg& m, int fd) {
  auto r = std::make_unique<protocol::CallResultMsg>();
  protocol::init_header(*r, protocol::MsgType::CallResult);
  r->call_id = m.call_id;
  r->status = static_cast<uint32_t>(protocol::CallStatus::BadInput);
  void* p = MAP_FAILED;
  if (fd >= 0 && m.arena_bytes > 0 && m.input_offset <= m.arena_bytes && m.input_bytes <= m.arena_bytes - m.input_offset &&
      m.output_offset <= m.arena_bytes && m.output_capacity <= m.arena_bytes - m.output_offset)
    p = ::mmap(nullptr, m.arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd >= 0) ::close(fd);
  if (p == MAP_FAILED || !g_loaded.op) {
    set_message(r->message, sizeof r->message, !g_loaded.op ? "no op loaded" : "bad call region");
    send_msg(*r);
    if (p != MAP_FAILED) ::munmap(p, m.arena_bytes);
    return;
  }
  auto* base = static_cast<uint8_t*>(p);
  try {
    c10::InferenceMode guard;
    const uint32_t reps = std::min<uint32_t>(m.reps, protocol::kMaxTimedReps);
    std::vector<c10::IValue> args;
    c10::Stack stack;
    // Every call gets its own exact copy of the inputs, decoded outside the timed region, so no
    // call sees another's mutations.
    auto one_call = [&](bool timed) {
      args = kg::wire::decode(base + m.input_offset, m.input_bytes);
      stack.assign(args.begin(), args.end());
      auto t0 = std::chrono::steady_clock::now();
      g_loaded.op->callBoxed(&stack);
      auto t1 = std::chrono::steady_clock::now();
      if (timed) r->times_s[r->n_times++] = std::chrono::duration<double>(t1 - t0).count();
    };
    for (uint32_t i = 0; i < m.warmup; ++i) one_call(false);
    if (reps == 0) one_call(false);
    for (uint32_t i = 0; i < reps; ++i) one_call(true);
    std::vector<c10::IValue> out(stack.begin(), stack.end());
    if (out.size() != g_loaded.n_returns) throw std::runtime_error("op returned " + std::to_string(out.size()) + " values");
    out.insert(out.end(), args.begin(), args.end());
    try {
      r->output_bytes = kg::wire::encode(out, base + m.output_offset, m.output_capacity);
      r->status = static_cast<uint32_t>(protocol::CallStatus::Ok);
    } catch (const kg::wire::WireError& e) {
      r->status = static_cast<uint32_t>(protocol::CallStatus::OutputTooLarge);
      set_message(r->message, sizeof r->message, e.what());
    }
  } catch (const std::exception& e) {
    r->status = static_cast<uint32_t>(protocol::CallStatus::Exception);
    set_message(r->message, sizeof r->message, e.what());
  }
  ::munmap(p, m.arena_bytes);
  send_msg(*r);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--fd") == 0) g_sock = std::atoi(argv[2]);
  protocol::HelloMsg hello{};
  protocol::init_header(hello, protocol::MsgType::Hello);
  hello.pid = ::getpid();
  set_message(hello.torch_version, sizeof hello.torch_version, TORCH_VERSION);
  if (!send_msg(hello)) {
    std::fprintf(stderr, "kg-runner: cannot talk on fd %d: %s\n", g_sock, std::strerror(errno));
    return 3;
  }
  std::vector<unsigned char> buf(sizeof(protocol::CallResultMsg));
  while (true) {
    protocol::CallMsg call{};
    int fd = -1;
    ssize_t n = 0;
    if (!recv_call(&call, &fd, &n, buf.data(), buf.size())) return 0;  // supervisor gone
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
      case protocol::MsgType::Call:
        if (static_cast<size_t>(n) != sizeof call) return 4;
        handle_call(call, fd);
        break;
      case protocol::MsgType::Shutdown:
        return 0;
      default:
        return 4;
    }
  }
}

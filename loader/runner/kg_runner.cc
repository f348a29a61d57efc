// kg-runner: the only process that ever executes submission code. It runs inside the sandbox's
// run profile, loads one artifact at a time, and answers Call messages on fd 3 (protocol.h).
// It reports; it never decides: the supervisor re-checks everything it sends.
//
//   start      say Hello
//   Prepare    (a runner started ahead, in a pool) set up the device and the flush buffer now,
//              so that the Load that follows only loads
//   Load       set up the device (cuda: context, flush buffer, events), tighten the seccomp
//              filter, then load the artifact: dlopen (cpu, cuda) or the driver's module loader
//              (nvrtc) — the first untrusted code runs only after the filter is tight (load.cc)
//   Call       decode a fresh copy of the inputs for every call (no call sees another's
//              mutations), move them to the device, warm up, then per timed call: flush caches,
//              time the call (CUDA events on the runner's stream, or the monotonic clock),
//              wait for the device to be idle; encode returns and post-call arguments (call.cc,
//              call_run.cc)
//   Shutdown   write out the streams' buffers, answer ShutdownDone (not a python runner), exit
#include "instrument.h"
#include "kernelgate/protocol.h"
#include "kg_runner.h"

#include <torch/version.h>

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <vector>

namespace kg::runner {

void flush_streams() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
}

bool Runner::say_hello() {
  protocol::HelloMsg hello{};
  protocol::init_header(hello, protocol::MsgType::Hello);
  hello.pid = ::getpid();
  set_message(hello.torch_version, sizeof hello.torch_version, TORCH_VERSION);
  return channel_.send(hello);
}

int Runner::serve() {
  std::vector<unsigned char> buf(std::max({sizeof(protocol::LoadMsg), sizeof(protocol::CallMsg), sizeof(protocol::CallResultMsg)}));
  while (true) {
    UniqueFd passed;
    const ssize_t n = channel_.receive(buf.data(), buf.size(), &passed);
    if (n <= 0) return 0;  // supervisor gone
    protocol::MsgHeader h{};
    if (static_cast<size_t>(n) < sizeof h) return 4;
    std::memcpy(&h, buf.data(), sizeof h);
    if (h.magic != protocol::kMagic || h.version != protocol::kVersion) return 4;
    switch (static_cast<protocol::MsgType>(h.type)) {
      case protocol::MsgType::Load: {
        passed.reset();  // a Load carries no descriptor: none stays open for the artifact
        if (static_cast<size_t>(n) != sizeof(protocol::LoadMsg)) return 4;
        auto m = std::make_unique<protocol::LoadMsg>();
        std::memcpy(m.get(), buf.data(), sizeof *m);
        load(*m);
        break;
      }
      case protocol::MsgType::Prepare: {
        passed.reset();
        if (static_cast<size_t>(n) != sizeof(protocol::PrepareMsg)) return 4;
        protocol::PrepareMsg m{};
        std::memcpy(&m, buf.data(), sizeof m);
        prepare(m);
        break;
      }
      case protocol::MsgType::Call: {
        if (static_cast<size_t>(n) != sizeof(protocol::CallMsg)) return 4;
        auto m = std::make_unique<protocol::CallMsg>();
        std::memcpy(m.get(), buf.data(), sizeof *m);
        if (!call(*m, std::move(passed))) return 5;  // device error: the context is gone
        break;
      }
      case protocol::MsgType::Shutdown: {
        // With the streams written, the supervisor takes the record now and need not wait for
        // this process's teardown (its memory, a CUDA context). Python's own buffers are written
        // only as its interpreter ends, so a python runner says nothing and is waited for.
        if (python_started()) return 0;
        flush_streams();
        protocol::ShutdownDoneMsg done{};
        protocol::init_header(done, protocol::MsgType::ShutdownDone);
        channel_.send(done);
        return 0;
      }
      default: return 4;
    }
  }
}

}  // namespace kg::runner

int main(int argc, char** argv) {
  using namespace kg;
  const int fd = argc == 3 && std::strcmp(argv[1], "--fd") == 0 ? std::atoi(argv[2]) : protocol::kRunnerFd;
  // The steady state of a long-running PyTorch process: blocks up to 32 MiB (glibc's maximum
  // threshold) come from the heap and freed ones stay mapped for the next call, instead of every
  // call mapping fresh pages and paying their page faults (relu over 1M elements took 16x a bare
  // loop under glibc's initial thresholds in bench_timing_overhead). Candidate and eager alike.
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 512 << 20);
  runner::observer_install();  // before any artifact's code can run
  runner::Runner runner(fd);
  if (!runner.say_hello()) {
    std::fprintf(stderr, "kg-runner: cannot talk on fd %d: %s\n", fd, std::strerror(errno));
    return 3;
  }
  const int rc = runner.serve();
  if (runner.python_started()) return rc;
  // Out without the static destructors: libtorch's teardown was 65 of a CPU runner's 80 ms from
  // Shutdown to its record, time an evaluation waits for at the end of every op. Whatever a kernel
  // left in the streams' buffers is written first, so the record's stdout, where B17 looks, is as
  // complete as after a return (tests/exploits/protocol_stdout_forge_buffered). A python runner
  // returns: its interpreter's own buffers are written when it is finalised.
  runner::flush_streams();
  ::_exit(rc);
}

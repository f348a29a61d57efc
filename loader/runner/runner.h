// kg-runner's parts (private): an op it can call, the timing loop's device hooks, and the
// CUDA side, which exists only when the linked libtorch has CUDA (KG_RUNNER_CUDA).
#pragma once

#include "kernelgate/protocol.h"
#include "kg_build_config.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#if KG_TORCH_CUDA || defined(KG_SYNTAX_CHECK_CUDA)
#define KG_RUNNER_CUDA 1
#else
#define KG_RUNNER_CUDA 0
#endif

namespace kg::runner {

// A loaded op: prepare() runs outside the timed region (output allocation, layout), run() is
// what is timed, finish() runs after it (copy-backs).
class Op {
 public:
  virtual ~Op() = default;
  virtual size_t n_returns() const = 0;
  virtual void prepare(std::vector<c10::IValue>& args, const protocol::CallMsg& m) {}
  virtual std::vector<c10::IValue> run(std::vector<c10::IValue>& args) = 0;
  virtual void finish(std::vector<c10::IValue>& args) {}
};

// protocol::kLoadGradient (gradient.cc): `op` called with autograd on, the gradients of the
// weighted sum of its floating returns returned as one Tensor[].
std::unique_ptr<Op> make_gradient_op(c10::OperatorHandle op);

// A device error (CUDA fault): the context is gone; report and exit.
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- CUDA (cuda_device.cc); each returns "" or what failed --------------------------------------
#if KG_RUNNER_CUDA
// Initialises cuda:0, the flush buffer, the events (before the filter tightens).
std::string cuda_setup();
bool cuda_ready();
// `sets`: values decoded as views of the call region's input sets, which are the `bytes` bytes
// from `first`. Copies those bytes to cuda:0 at once (one copy, where a copy per tensor waited
// for each) and makes every tensor in `sets` a tensor there, with the same sizes, strides and
// offsets. Throws when a tensor's bytes lie outside them.
void region_views_to_cuda(const uint8_t* first, size_t bytes, std::vector<std::vector<c10::IValue>>& sets);
// Fresh copies of `values` (already on cuda:0) made on the device, queued on the current stream
// without waiting: each timed call gets its own inputs with no host copy and no idle device
// between calls (an idle gap before a call slows it down and skews its time).
std::vector<c10::IValue> cuda_fresh_copies(const std::vector<c10::IValue>& values);
// Makes the caching allocator hold at least `bytes` on cuda:0 (one segment, allocated and freed
// at once), so the timed calls' fresh copies and returns are carved out of memory mapped before
// timing. Gives up quietly when the device has no room: it only makes timing faithful.
void cuda_reserve(size_t bytes);
// Before a timed call: L2 flush (`bytes`, 0 = 2x L2) and persisting-L2 reset; evidence bits.
uint32_t cuda_before_timed(int64_t bytes);
// Records start, runs `fn`, records end, waits; returns the event time and the idle wait.
struct CudaTimes {
  double call_s = 0;
  double idle_wait_s = 0;
  uint32_t evidence = 0;
};
CudaTimes cuda_timed(const std::function<void()>& fn);
// Synchronises the device and throws DeviceError on a sticky error (after untimed calls too).
void cuda_check_idle(const char* where);
// An untimed call on cuda:0: `fn` between events on the current stream, with a timed call's
// bracketing of work on streams of the call's own, then cuda_check_idle. Returns
// kEvidenceWorkOutsideTimedRegion when such work was not ordered with the call's stream (it began
// before the call's inputs were ready, or outlived the call's stream), and
// kEvidenceSideStreamNotOrdered when work went to a stream never ordered after it; else 0.
uint32_t cuda_untimed(const std::function<void()>& fn);
// The nvrtc kind: loads cubin + launch table; throws std::runtime_error with the reason.
std::unique_ptr<Op> load_nvrtc(const std::string& cubin_path, const std::string& aten_name, const std::string& overload);
#endif

}  // namespace kg::runner

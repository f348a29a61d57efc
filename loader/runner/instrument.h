// What kg-runner watches around the submission's calls, beyond timing (runner.h): evidence it
// reports in CallResultMsg; the supervisor decides what it means.
#pragma once

#include "kernelgate/protocol.h"

#include <ATen/core/ivalue.h>

#include <chrono>
#include <string>
#include <vector>

namespace kg::runner {

// Allocation poisoning (unwritten_output, nondeterministic_output): while armed, every fresh
// CPU allocation holds junk instead of whatever the allocator had (often zeros): c10's CPU
// allocator fills a fixed NaN pattern (0x7fedbeef words, recognisable in the supervisor), and
// glibc's malloc a byte that changes with every call (M_PERTURB; the small-chunk caches that
// M_PERTURB skips are refilled with it first), so a result read from uninitialised memory
// changes from call to call. Untimed calls only: the fills cost a pass over each allocation.
void poison_arm(uint32_t call_no);
// Disarms; false when c10's fill flag was switched off while armed (by the submission).
bool poison_disarm();
// Bool tensors among `values` whose storage holds poison bytes (the call never wrote them) get
// those bytes set to 1, so the outputs stay valid on the wire; returns kEvidenceUnwrittenBool
// when there were any.
uint32_t settle_bool_poison(const std::vector<c10::IValue>& values);

// Dispatcher observer (fallback_to_torch): a global RecordFunction callback, installed before
// any artifact is loaded, noting the operators dispatched while a call runs: on the calling
// thread those directly inside the called op, and those inside a noted op that is not aten's (a
// custom op of the kernel's own, load_inline's); on any other thread the outermost ones.
void observer_install();
// `called_op`: "kgsub::relu__default" ("" for nvrtc). In self-check (`note_dispatches` false, the
// called op is "aten::relu" itself) nothing is noted: all that runs is aten's.
void observer_arm(const std::string& called_op, bool note_dispatches);
// Disarms; false when the callback did not see a canary op after the call or, when
// `expect_called`, the called op start (removed, cleared or disabled by the submission).
bool observer_disarm(bool expect_called);
// The names seen since the last report (capped at kMaxDispatched; overflow sets its evidence bit).
void observer_report(protocol::CallResultMsg& r);

// Arms the observer (and, when `poison`, the poisoning) for one call; disarmed by finish() or,
// when the call throws, by the destructor.
class CallWatch {
 public:
  CallWatch(uint32_t call_no, const std::string& called_op, bool submission, bool poison);
  ~CallWatch();
  CallWatch(const CallWatch&) = delete;
  CallWatch& operator=(const CallWatch&) = delete;
  // Disarms; the evidence bits for instruments found switched off.
  uint32_t finish();

 private:
  bool poison_, armed_ = true;
  bool check_called_;
};

// Device work (no_device_work, cuda:0 only): counts the kernel launches, memsets and
// device-to-device copies queued through libcudart by any thread while it lives
// (cudart/device_work.h).
class DeviceWorkWatch {
 public:
  DeviceWorkWatch();
  ~DeviceWorkWatch();
  DeviceWorkWatch(const DeviceWorkWatch&) = delete;
  DeviceWorkWatch& operator=(const DeviceWorkWatch&) = delete;
  // Stops counting; the work items queued.
  uint64_t finish();

 private:
  bool armed_ = true;
};

// Whether `values` hold a defined tensor with at least one element (alone, in lists and tuples).
bool holds_elements(const std::vector<c10::IValue>& values);

// The bytes of the distinct device (non-CPU) storages the tensors in `values` use.
size_t device_storage_bytes(const std::vector<c10::IValue>& values);

// Every defined CPU tensor in `values` (alone, in lists and tuples).
std::vector<at::Tensor> cpu_tensors(const std::vector<c10::IValue>& values);

// Work that escapes the call (async_escape): the CPU tensors of `values` (returns and arguments)
// as they are right after the call returned.
class Snapshot {
 public:
  explicit Snapshot(const std::vector<c10::IValue>& values);
  // Whether any of them changes within `window` (checked twice: soon, and at its end).
  bool changes_within(std::chrono::microseconds window) const;

 private:
  struct Part {
    at::Tensor tensor;  // keeps the storage alive
    std::vector<uint8_t> bytes;
  };
  std::vector<Part> parts_;
  bool differs() const;
};

// Per return (capped at kMaxReturnAlias): the index of the argument whose storage it shares,
// kAliasNone, or kAliasNotTensor.
void report_aliasing(const std::vector<c10::IValue>& returns, const std::vector<c10::IValue>& args, protocol::CallResultMsg& r);

}  // namespace kg::runner

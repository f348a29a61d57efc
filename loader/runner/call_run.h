// One Call's calls, after its request was checked (call.cc): per input set its arguments and the
// returns of its latest call, and the reply they fill.
#pragma once

#include "cpu_flush.h"
#include "kernelgate/protocol.h"
#include "kg_runner.h"

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <vector>

namespace kg::runner {

class CallRun {
 public:
  // `region`: the call's mapped memfd; `set_offset`: where each input set starts, from the input
  // region's start. `call_no` counts every call the runner made.
  CallRun(const protocol::CallMsg& m, uint8_t* region, const std::vector<size_t>& set_offset, const LoadedOp& loaded, CpuFlush& cpu_flush,
          uint32_t& call_no, protocol::CallResultMsg& r);
  // The warm-up calls, then one judged call (reps 0) or the timed calls; or, for an in-place
  // call, two judged calls on the same buffers.
  void run_calls();
  // The returns' aliasing, then per set the returns of its last call and its arguments after it
  // into the output region (status Ok, or OutputTooLarge when they do not fit).
  void encode_outputs();

 private:
  // Set k's values: fresh CPU tensors, or (`views`) views of the region's bytes.
  std::vector<c10::IValue> decode_set(uint32_t k, bool views = false) const;
  void move_inputs_to_device();
  void fresh_args(uint32_t k);
  void untimed_call(uint32_t k, bool judged);
  void call_untimed(uint32_t k, bool judged);  // on set k's arguments as they are
  void in_place_calls();
  void timed_call(uint32_t k);
  void reserve_for_timed_calls();

  const protocol::CallMsg& m_;
  uint8_t* const region_;
  const std::vector<size_t>& set_offset_;
  const LoadedOp& loaded_;
  CpuFlush& cpu_flush_;
  uint32_t& call_no_;
  protocol::CallResultMsg& r_;
  const bool on_cuda_;
  const uint32_t n_sets_;
  const uint32_t reps_;
  const size_t input_bytes_;  // the input sets' bytes, from the input region's start
  std::vector<std::vector<c10::IValue>> set_args_, set_out_;
  std::vector<c10::IValue> decoded_;                 // the latest call's arguments as decoded, before Op::prepare
  std::vector<std::vector<c10::IValue>> on_device_;  // cuda:0: each set's inputs, moved there once
  uint32_t calls_ = 0;                               // warm-up and timed calls made: call c uses set c % n_sets
};

// in_place.cc: exact copies of values (tensors get fresh storage of the same size, with the
// same strides and offset); and `values` written into `buffers` (the same arguments of an
// earlier call): each tensor's storage bytes copied into the buffer's storage where it has the
// same dtype, sizes, strides, offset and size (else the value itself replaces the buffer).
// Throws std::runtime_error when the arguments do not correspond (count, tensor or not).
std::vector<c10::IValue> exact_copies(const std::vector<c10::IValue>& values);
void write_into(std::vector<c10::IValue>& buffers, const std::vector<c10::IValue>& values);

}  // namespace kg::runner

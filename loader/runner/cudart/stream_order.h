// Which streams a call's work may run on without racing the work queued before the call (the
// runner's input copies and cache flush on the call's stream): the streams ordered after the
// call's stream, as far as the CUDA runtime calls made during the call show (async_escape,
// docs/threats.md B10). Pure bookkeeping, fed by the device work watch (device_work.cc), which
// names streams as the runtime means them: the legacy default stream is cudaStreamLegacy, the
// per-thread default stream cudaStreamPerThread, never null. Not thread-safe: the watch holds a
// mutex around it.
//
// A stream is ordered when
// - it is the call's stream;
// - the call's stream is the legacy default stream and it is the legacy or the per-thread
//   default stream, or a blocking stream (created without cudaStreamNonBlocking): the runtime
//   makes their work wait for the legacy stream's earlier work;
// - the call's stream is a blocking stream and it is the legacy default stream;
// - it waited for an event recorded during the call on a stream ordered at that moment
//   (transitively; an event recorded again on a stream that is not ordered stops counting);
// - the host has waited for the call's stream's work during the call: a synchronisation of a
//   stream that had an ordered command queued on it (or a synchronous copy to the host there),
//   of an event that counts, or of the device.
#pragma once

#include <vector>

struct CUstream_st;
struct CUevent_st;

namespace kg::runner::device_work {

class StreamOrder {
 public:
  // Whether `stream` was created without cudaStreamNonBlocking (the default streams are).
  using BlockingQuery = bool (*)(CUstream_st* stream);
  explicit StreamOrder(BlockingQuery blocking) : blocking_(blocking) {}

  // A new call on `caller`: nothing but the implicit relations hold.
  void begin(CUstream_st* caller);
  bool ordered(CUstream_st* stream) const;

  // Work (a launch, memset, copy, graph) queued on `stream`; false when the stream was not ordered.
  bool queued(CUstream_st* stream);
  void recorded(CUevent_st* event, CUstream_st* stream);
  void waited(CUstream_st* stream, CUevent_st* event);
  // The host saw `stream`'s or `event`'s work complete (synchronised, or a query said so).
  void stream_completed(CUstream_st* stream);
  void event_completed(CUevent_st* event);
  void device_synchronised() { host_waited_ = true; }

 private:
  // The streams whose commands so far wait for the call's stream's work before the call.
  bool joined(CUstream_st* stream) const;
  bool implicitly_ordered(CUstream_st* stream) const;

  BlockingQuery blocking_;
  CUstream_st* caller_ = nullptr;
  bool host_waited_ = false;
  std::vector<CUstream_st*> streams_;  // ordered by a wait, or an ordered command queued on them
  std::vector<CUevent_st*> events_;    // recorded during the call on an ordered stream
};

}  // namespace kg::runner::device_work

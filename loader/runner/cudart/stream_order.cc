// StreamOrder: see stream_order.h.
#include "stream_order.h"

#include <driver_types.h>

#include <algorithm>

namespace kg::runner::device_work {
namespace {

template <typename T>
bool contains(const std::vector<T>& v, T x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

void StreamOrder::begin(CUstream_st* caller) {
  caller_ = caller;
  host_waited_ = false;
  streams_.clear();
  events_.clear();
}

bool StreamOrder::joined(CUstream_st* stream) const { return stream == caller_ || contains(streams_, stream); }

bool StreamOrder::implicitly_ordered(CUstream_st* stream) const {
  if (caller_ == cudaStreamLegacy) return stream == cudaStreamPerThread || blocking_(stream);
  return stream == cudaStreamLegacy && blocking_(caller_);
}

bool StreamOrder::ordered(CUstream_st* stream) const { return host_waited_ || joined(stream) || implicitly_ordered(stream); }

bool StreamOrder::queued(CUstream_st* stream) {
  if (!ordered(stream)) return false;
  // A command that waited for the call's stream: synchronising this stream now waits for it too.
  if (!joined(stream)) streams_.push_back(stream);
  return true;
}

void StreamOrder::recorded(CUevent_st* event, CUstream_st* stream) {
  events_.erase(std::remove(events_.begin(), events_.end(), event), events_.end());
  if (queued(stream)) events_.push_back(event);
}

void StreamOrder::waited(CUstream_st* stream, CUevent_st* event) {
  if (contains(events_, event) && !joined(stream)) streams_.push_back(stream);
}

// Only a joined stream's completion says the call's stream got there: an empty blocking stream
// completes at once, whatever the legacy stream still has queued.
void StreamOrder::stream_completed(CUstream_st* stream) {
  if (joined(stream)) host_waited_ = true;
}

void StreamOrder::event_completed(CUevent_st* event) {
  if (contains(events_, event)) host_waited_ = true;
}

}  // namespace kg::runner::device_work

// The device work watch's ordering half (stream_order.h says what "ordered" means): while a call
// is armed (device_work.h, arm_timed .. disarm_timed), kg-runner's definitions of libcudart's
// event-record, stream-wait and synchronisation entry points (stream_order_watch.cc) keep a
// StreamOrder for it, and each piece of work queued is checked against it. Outside an armed call
// they only forward; while armed, a mutex guards the bookkeeping (never held across a runtime
// call of the caller's).
#pragma once

#include <cuda_runtime_api.h>

namespace kg::runner::device_work {

// Resolves libcudart's event, wait and synchronisation entry points; false when one is missing.
bool install_ordering();
// A call on `caller` (null: the legacy default stream) starts; nothing is yet known to be queued
// out of order.
void begin_ordering(cudaStream_t caller);
void end_ordering();
// Work that an entry point (a _ptsz/_ptds one: per_thread_entry) queued on `stream`, when it was
// accepted (succeeded): not ordered after the call's stream, and not being captured into a
// graph, it is noted.
void note_queued(cudaStream_t stream, bool per_thread_entry, bool succeeded);
// The host saw everything queued on `stream` so far complete (a synchronous copy to the host).
void note_stream_completed(cudaStream_t stream, bool per_thread_entry);
// Whether `stream` is being captured into a graph (asked quietly; the legacy stream never is).
bool stream_capturing(cudaStream_t stream);
// libcudart's cudaEventRecord, for the watch's own events (never noted).
cudaError_t record_own_event(cudaEvent_t event, cudaStream_t stream);

}  // namespace kg::runner::device_work

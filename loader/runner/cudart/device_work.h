// Device work watch (no_device_work and async_escape, docs/threats.md B19 and B10): kg-runner defines
// and exports the CUDA runtime's kernel-launch, memset and copy entry points (device_work.cc),
// so the submission's calls into libcudart reach them first; each notes what it queues and
// forwards to libcudart.
//
// Counting (untimed calls): only device-side work counts: kernel launches (<<<>>>,
// cudaLaunchKernel*, cooperative, graphs), memsets and device-to-device copies. A host-to-device
// copy of a result computed on the host, or a host function queued on a stream, is not device
// work.
//
// Bracketing (every call on cuda:0, timed or not): work queued on a stream other than the call's
// own gets an event on its stream just before and just after it, so the runner can tell whether
// it ran inside the call's start and stop events.
//
// Ordering (the same calls; stream_order.h, stream_order_watch.h): kg-runner also defines the
// event-record, stream-wait and synchronisation entry points, and follows which streams are
// ordered after the call's stream; work queued on one that is not can start before the call's
// inputs are written, on every call whatever its size or timing.
#pragma once

#include <cstdint>

struct CUstream_st;
struct CUevent_st;

namespace kg::runner::device_work {

// Resolves libcudart's entry points (before the runner's filter tightens); false when libcudart
// is not loaded. Each entry point also resolves itself on first use.
bool install();
// Starts counting, from zero, the device work queued by any thread.
void arm();
// Stops counting; the number of device work items queued since arm().
uint64_t disarm();

// The work items bracketed per timed call (the first ones; later ones are not).
constexpr int kMaxBracketed = 16;
// Creates the bracketing events (needs the CUDA context); false when that fails.
bool create_bracket_events();
// Brackets the work queued by any thread on streams other than `timed` until disarm_timed().
// With the legacy default stream as `timed`, work on it (stream 0 or cudaStreamLegacy) is its own.
// Both also start and stop the ordering watch.
void arm_timed(CUstream_st* timed);
void disarm_timed();
// Whether the last armed call queued work (a launch, memset, copy or graph) on a stream that was
// not ordered after its stream at that moment (no event of it waited for, no host wait for it).
bool queued_unordered_work();
// After the device is idle: the longest time (seconds) by which bracketed work began before
// `start` completed or ended after `stop` completed; 0 when none did or nothing was bracketed.
double outside_timed_region(CUevent_st* start, CUevent_st* stop);

}  // namespace kg::runner::device_work

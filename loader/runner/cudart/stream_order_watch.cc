// The ordering half of the device work watch: see stream_order_watch.h. Like device_work.cc's,
// the definitions below take precedence over libcudart's in the whole process (exports.map).
#include "stream_order_watch.h"

#include "device_work.h"
#include "forward.h"
#include "stream_order.h"

#include <mutex>

extern "C" {
cudaError_t cudaEventRecord_ptsz(cudaEvent_t, cudaStream_t);
cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t, cudaStream_t, unsigned int);
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t, cudaEvent_t, unsigned int);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t);
cudaError_t cudaStreamQuery_ptsz(cudaStream_t);
}

namespace kg::runner::device_work {
namespace {

// The watch's own queries in the relaxed capture mode: while this thread captures a stream into a
// graph (thread-local or global mode), cudaStreamGetFlags on any stream but the legacy one
// invalidates the capture (seen on the H200 with CUDA 13), which would break an honest kernel
// that captures a graph during its call.
template <typename Q>
bool relaxed(Q query) {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  const bool exchanged = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
  const bool r = query();
  if (exchanged) cudaThreadExchangeStreamCaptureMode(&mode);
  return r;
}

bool blocking(cudaStream_t s) {
  unsigned flags = 0;
  return relaxed([&] { return quietly([&] { return cudaStreamGetFlags(s, &flags) == cudaSuccess; }); }) &&
         (flags & cudaStreamNonBlocking) == 0;
}

// Work queued on a stream being captured into a graph does not run now; the graph's launch is
// what is checked. The legacy stream is never captured (and asking there during another
// stream's capture is itself an error).
}  // namespace

bool stream_capturing(cudaStream_t s) {
  if (s == cudaStreamLegacy) return false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return quietly([&] { return cudaStreamIsCapturing(s, &status) == cudaSuccess; }) && status != cudaStreamCaptureStatusNone;
}

namespace {

std::atomic<bool> g_armed{false};
std::atomic<bool> g_unordered{false};
std::mutex g_mutex;
StreamOrder g_order{blocking};

// Runs `note` on the armed call's StreamOrder. A runtime call the bookkeeping itself makes on
// this thread is not noted again (it would wait for the mutex it holds).
thread_local bool g_noting = false;
template <typename F>
void with_order(F note) {
  if (!g_armed.load(std::memory_order_acquire) || g_noting) return;
  g_noting = true;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_armed.load(std::memory_order_relaxed)) note(g_order);
  }
  g_noting = false;
}

}  // namespace

void begin_ordering(cudaStream_t caller) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_order.begin(named_stream(caller, false));
  g_unordered.store(false, std::memory_order_relaxed);
  g_armed.store(true, std::memory_order_release);
}

void end_ordering() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_armed.store(false, std::memory_order_release);
}

void note_queued(cudaStream_t stream, bool per_thread_entry, bool succeeded) {
  if (!succeeded) return;  // nothing was queued
  const cudaStream_t s = named_stream(stream, per_thread_entry);
  with_order([&](StreamOrder& order) {
    // Captured work runs when its graph launches: asked first, so no query touches the capture.
    if (!stream_capturing(s) && !order.queued(s)) g_unordered.store(true, std::memory_order_relaxed);
  });
}

void note_stream_completed(cudaStream_t stream, bool per_thread_entry) {
  const cudaStream_t s = named_stream(stream, per_thread_entry);
  with_order([&](StreamOrder& order) { order.stream_completed(s); });
}

bool queued_unordered_work() { return g_unordered.load(std::memory_order_acquire); }

}  // namespace kg::runner::device_work

namespace dw = kg::runner::device_work;

// One forwarding definition per entry point: libcudart's own function is called, and NOTE runs
// on the armed call's StreamOrder (`order`) when it succeeded. A missing libcudart answers
// cudaErrorNotSupported.
#define KG_ORDERING(name, params, args, NOTE)                                    \
  namespace kg::runner::device_work {                                            \
  std::atomic<cudaError_t(*) params> real_##name{nullptr};                       \
  }                                                                              \
  extern "C" __attribute__((visibility("default"))) cudaError_t name params {    \
    auto f = dw::real(dw::real_##name, #name);                                   \
    if (!f) return cudaErrorNotSupported;                                        \
    const cudaError_t r = f args;                                                \
    if (r == cudaSuccess) dw::with_order([&](dw::StreamOrder& order) { NOTE; }); \
    return r;                                                                    \
  }

KG_ORDERING(cudaEventRecord, (cudaEvent_t e, cudaStream_t s), (e, s), order.recorded(e, dw::named_stream(s, false)))
KG_ORDERING(cudaEventRecord_ptsz, (cudaEvent_t e, cudaStream_t s), (e, s), order.recorded(e, dw::named_stream(s, true)))
KG_ORDERING(cudaEventRecordWithFlags, (cudaEvent_t e, cudaStream_t s, unsigned int fl), (e, s, fl),
            order.recorded(e, dw::named_stream(s, false)))
KG_ORDERING(cudaEventRecordWithFlags_ptsz, (cudaEvent_t e, cudaStream_t s, unsigned int fl), (e, s, fl),
            order.recorded(e, dw::named_stream(s, true)))
KG_ORDERING(cudaStreamWaitEvent, (cudaStream_t s, cudaEvent_t e, unsigned int fl), (s, e, fl), order.waited(dw::named_stream(s, false), e))
KG_ORDERING(cudaStreamWaitEvent_ptsz, (cudaStream_t s, cudaEvent_t e, unsigned int fl), (s, e, fl),
            order.waited(dw::named_stream(s, true), e))
KG_ORDERING(cudaStreamSynchronize, (cudaStream_t s), (s), order.stream_completed(dw::named_stream(s, false)))
KG_ORDERING(cudaStreamSynchronize_ptsz, (cudaStream_t s), (s), order.stream_completed(dw::named_stream(s, true)))
KG_ORDERING(cudaStreamQuery, (cudaStream_t s), (s), order.stream_completed(dw::named_stream(s, false)))
KG_ORDERING(cudaStreamQuery_ptsz, (cudaStream_t s), (s), order.stream_completed(dw::named_stream(s, true)))
KG_ORDERING(cudaEventSynchronize, (cudaEvent_t e), (e), order.event_completed(e))
KG_ORDERING(cudaEventQuery, (cudaEvent_t e), (e), order.event_completed(e))
KG_ORDERING(cudaDeviceSynchronize, (), (), order.device_synchronised())

#undef KG_ORDERING

cudaError_t kg::runner::device_work::record_own_event(cudaEvent_t event, cudaStream_t stream) {
  auto f = real(real_cudaEventRecord, "cudaEventRecord");
  return f ? f(event, stream) : cudaErrorNotSupported;
}

bool kg::runner::device_work::install_ordering() {
  bool ok = true;
#define KG_RESOLVE(name) ok = real(real_##name, #name) != nullptr && ok;
  KG_RESOLVE(cudaEventRecord)
  KG_RESOLVE(cudaEventRecord_ptsz)
  KG_RESOLVE(cudaEventRecordWithFlags)
  KG_RESOLVE(cudaEventRecordWithFlags_ptsz)
  KG_RESOLVE(cudaStreamWaitEvent)
  KG_RESOLVE(cudaStreamWaitEvent_ptsz)
  KG_RESOLVE(cudaStreamSynchronize)
  KG_RESOLVE(cudaStreamSynchronize_ptsz)
  KG_RESOLVE(cudaStreamQuery)
  KG_RESOLVE(cudaStreamQuery_ptsz)
  KG_RESOLVE(cudaEventSynchronize)
  KG_RESOLVE(cudaEventQuery)
  KG_RESOLVE(cudaDeviceSynchronize)
#undef KG_RESOLVE
  return ok;
}

// Device work watch: see device_work.h. The definitions below take precedence over libcudart's
// in the whole process (the runner exports them: exports.map), for the submission's artifact
// and for libtorch alike; outside an armed window they only forward.
#include "device_work.h"

#include "forward.h"
#include "stream_order_watch.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>

// The entry points nvcc's <<<>>> launches go through (crt/host_runtime.h), and the per-thread
// default stream variants, which cuda_runtime_api.h declares only under
// CUDA_API_PER_THREAD_DEFAULT_STREAM.
extern "C" {
#if CUDART_VERSION >= 12000
cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
#endif
cudaError_t cudaLaunchKernel_ptsz(const void*, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t*, const void*, void**);
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void*, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t, cudaStream_t);
cudaError_t cudaMemsetAsync_ptsz(void*, int, size_t, cudaStream_t);
cudaError_t cudaMemset_ptds(void*, int, size_t);
cudaError_t cudaMemcpyAsync_ptsz(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemcpy_ptds(void*, const void*, size_t, cudaMemcpyKind);
}

namespace kg::runner::device_work {
namespace {

std::atomic<bool> g_armed{false};
std::atomic<uint64_t> g_work{0};

void count() {
  if (g_armed.load(std::memory_order_relaxed)) g_work.fetch_add(1, std::memory_order_relaxed);
}

// Bracketing: the timed stream while armed, the events, how many were handed out.
std::atomic<bool> g_timed_armed{false};
cudaStream_t g_timed = nullptr;
std::atomic<int> g_bracketed{0};
cudaEvent_t g_before[kMaxBracketed] = {};
cudaEvent_t g_after[kMaxBracketed] = {};
std::atomic<bool> g_recorded[kMaxBracketed] = {};  // both events of the slot recorded in this call
bool g_have_events = false;

bool legacy(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy; }

// The slot for work about to be queued on `s`, its "before" event recorded; -1 when not bracketed.
int bracket_begin(cudaStream_t s) {
  if (!g_timed_armed.load(std::memory_order_acquire) || !g_have_events) return -1;
  if (s == g_timed || (legacy(s) && legacy(g_timed))) return -1;
  // Captured work runs when its graph launches (the launch is bracketed); an event of the watch's
  // own recorded into someone's capture would only disturb the capture.
  if (stream_capturing(s)) return -1;
  const int slot = g_bracketed.fetch_add(1, std::memory_order_relaxed);
  if (slot >= kMaxBracketed) return -1;
  return record_own_event(g_before[slot], s) == cudaSuccess ? slot : -1;
}

void bracket_end(int slot, cudaStream_t s) {
  if (slot >= 0 && record_own_event(g_after[slot], s) == cudaSuccess) g_recorded[slot].store(true, std::memory_order_release);
}

bool on_device(const void* p) {
  cudaPointerAttributes a{};
  if (!quietly([&] { return cudaPointerGetAttributes(&a, p) == cudaSuccess; })) return false;
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

void count_copy(const void* dst, const void* src, cudaMemcpyKind kind) {
  if (!g_armed.load(std::memory_order_relaxed)) return;
  if (kind == cudaMemcpyDeviceToDevice || (kind == cudaMemcpyDefault && on_device(dst) && on_device(src))) count();
}

// A synchronous copy to the host returns once the copy, and so everything queued before it on
// its stream, has completed: the host waited for that stream.
void note_synchronous_copy(const void* dst, const void* src, cudaMemcpyKind kind, bool per_thread_entry, cudaError_t r) {
  if (r != cudaSuccess || !g_timed_armed.load(std::memory_order_acquire)) return;
  if (kind == cudaMemcpyDeviceToHost || (kind == cudaMemcpyDefault && on_device(src) && !on_device(dst)))
    note_stream_completed(nullptr, per_thread_entry);
}

}  // namespace

void arm() {
  g_work.store(0, std::memory_order_relaxed);
  g_armed.store(true, std::memory_order_seq_cst);
}

uint64_t disarm() {
  g_armed.store(false, std::memory_order_seq_cst);
  return g_work.load(std::memory_order_relaxed);
}

bool create_bracket_events() {
  if (g_have_events) return true;
  for (int i = 0; i < kMaxBracketed; ++i)
    if (cudaEventCreate(&g_before[i]) != cudaSuccess || cudaEventCreate(&g_after[i]) != cudaSuccess) return false;
  g_have_events = true;
  return true;
}

void arm_timed(CUstream_st* timed) {
  g_timed = timed;
  for (auto& r : g_recorded) r.store(false, std::memory_order_relaxed);
  g_bracketed.store(0, std::memory_order_relaxed);
  begin_ordering(timed);
  g_timed_armed.store(true, std::memory_order_release);
}

void disarm_timed() {
  g_timed_armed.store(false, std::memory_order_seq_cst);
  end_ordering();
}

double outside_timed_region(CUevent_st* start, CUevent_st* stop) {
  const int n = std::min(g_bracketed.load(std::memory_order_relaxed), kMaxBracketed);
  float worst_ms = 0;
  for (int i = 0; i < n; ++i) {
    if (!g_recorded[i].load(std::memory_order_acquire)) continue;  // a failed record leaves a stale event
    float early = 0, late = 0;
    if (quietly([&] { return cudaEventElapsedTime(&early, start, g_before[i]) == cudaSuccess; })) worst_ms = std::max(worst_ms, -early);
    if (quietly([&] { return cudaEventElapsedTime(&late, stop, g_after[i]) == cudaSuccess; })) worst_ms = std::max(worst_ms, late);
  }
  return worst_ms * 1e-3;
}

}  // namespace kg::runner::device_work

namespace dw = kg::runner::device_work;

// One forwarding definition per entry point: COUNT runs first (it sees the arguments), then
// libcudart's own function is called, bracketed when STREAM (the stream it queues on, or
// NO_STREAM for the synchronous ones) is not the timed stream; then the work is checked against
// the call's stream order (PER_THREAD: a _ptsz/_ptds entry point, whose null stream is the
// per-thread default stream), and THEN runs. A missing libcudart answers cudaErrorNotSupported.
#define NO_STREAM nullptr
#define KG_FORWARD(ret, name, params, args, COUNT, STREAM, PER_THREAD) KG_FORWARD_THEN(ret, name, params, args, COUNT, STREAM, PER_THREAD, )
#define KG_FORWARD_THEN(ret, name, params, args, COUNT, STREAM, PER_THREAD, THEN) \
  namespace kg::runner::device_work {                                             \
  std::atomic<ret(*) params> real_##name{nullptr};                                \
  }                                                                               \
  extern "C" __attribute__((visibility("default"))) ret name params {             \
    COUNT;                                                                        \
    auto f = dw::real(dw::real_##name, #name);                                    \
    if (!f) return cudaErrorNotSupported;                                         \
    const int slot = dw::bracket_begin(STREAM);                                   \
    const ret r = f args;                                                         \
    dw::bracket_end(slot, STREAM);                                                \
    dw::note_queued(STREAM, PER_THREAD, r == cudaSuccess);                        \
    THEN;                                                                         \
    return r;                                                                     \
  }

#if CUDART_VERSION >= 12000
KG_FORWARD(cudaError_t, __cudaLaunchKernel, (cudaKernel_t k, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st), (k, g, b, a, s, st),
           dw::count(), st, false)
KG_FORWARD(cudaError_t, __cudaLaunchKernel_ptsz, (cudaKernel_t k, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st), (k, g, b, a, s, st),
           dw::count(), st, true)
#endif
KG_FORWARD(cudaError_t, cudaLaunchKernel, (const void* k, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st), (k, g, b, a, s, st),
           dw::count(), st, false)
KG_FORWARD(cudaError_t, cudaLaunchKernel_ptsz, (const void* k, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st), (k, g, b, a, s, st),
           dw::count(), st, true)
KG_FORWARD(cudaError_t, cudaLaunchKernelExC, (const cudaLaunchConfig_t* c, const void* k, void** a), (c, k, a), dw::count(),
           c ? c->stream : NO_STREAM, false)
KG_FORWARD(cudaError_t, cudaLaunchKernelExC_ptsz, (const cudaLaunchConfig_t* c, const void* k, void** a), (c, k, a), dw::count(),
           c ? c->stream : NO_STREAM, true)
KG_FORWARD(cudaError_t, cudaLaunchCooperativeKernel, (const void* k, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st),
           (k, g, b, a, s, st), dw::count(), st, false)
KG_FORWARD(cudaError_t, cudaLaunchCooperativeKernel_ptsz, (const void* k, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st),
           (k, g, b, a, s, st), dw::count(), st, true)
KG_FORWARD(cudaError_t, cudaGraphLaunch, (cudaGraphExec_t g, cudaStream_t st), (g, st), dw::count(), st, false)
KG_FORWARD(cudaError_t, cudaGraphLaunch_ptsz, (cudaGraphExec_t g, cudaStream_t st), (g, st), dw::count(), st, true)
KG_FORWARD(cudaError_t, cudaMemsetAsync, (void* p, int v, size_t n, cudaStream_t st), (p, v, n, st), dw::count(), st, false)
KG_FORWARD(cudaError_t, cudaMemsetAsync_ptsz, (void* p, int v, size_t n, cudaStream_t st), (p, v, n, st), dw::count(), st, true)
KG_FORWARD(cudaError_t, cudaMemset, (void* p, int v, size_t n), (p, v, n), dw::count(), NO_STREAM, false)
KG_FORWARD(cudaError_t, cudaMemset_ptds, (void* p, int v, size_t n), (p, v, n), dw::count(), NO_STREAM, true)
KG_FORWARD(cudaError_t, cudaMemcpyAsync, (void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st), (d, s, n, k, st),
           dw::count_copy(d, s, k), st, false)
KG_FORWARD(cudaError_t, cudaMemcpyAsync_ptsz, (void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st), (d, s, n, k, st),
           dw::count_copy(d, s, k), st, true)
KG_FORWARD_THEN(cudaError_t, cudaMemcpy, (void* d, const void* s, size_t n, cudaMemcpyKind k), (d, s, n, k), dw::count_copy(d, s, k),
                NO_STREAM, false, dw::note_synchronous_copy(d, s, k, false, r))
KG_FORWARD_THEN(cudaError_t, cudaMemcpy_ptds, (void* d, const void* s, size_t n, cudaMemcpyKind k), (d, s, n, k), dw::count_copy(d, s, k),
                NO_STREAM, true, dw::note_synchronous_copy(d, s, k, true, r))

// A launch kernelgate's own code makes through the driver API for the submission (the python
// kind's Triton launcher, loader/runner/python/triton_driver.cc): counted, bracketed and checked
// against the call's stream order exactly as a runtime launch on `stream` is (a null stream is
// the legacy default stream, as for cudaLaunchKernel). Returns what `launch` returned (a CUresult).
extern "C" __attribute__((visibility("default"))) int kg_runner_watched_driver_launch(CUstream_st* stream, int (*launch)(void*),
                                                                                      void* context) {
  dw::count();
  const int slot = dw::bracket_begin(stream);
  const int r = launch(context);
  dw::bracket_end(slot, stream);
  dw::note_queued(stream, false, r == 0);
  return r;
}

#undef KG_FORWARD
#undef KG_FORWARD_THEN
#undef NO_STREAM

bool kg::runner::device_work::install() {
  bool ok = true;
#define KG_RESOLVE(name) ok = real(real_##name, #name) != nullptr && ok;
#if CUDART_VERSION >= 12000
  KG_RESOLVE(__cudaLaunchKernel)
  KG_RESOLVE(__cudaLaunchKernel_ptsz)
#endif
  KG_RESOLVE(cudaLaunchKernel)
  KG_RESOLVE(cudaLaunchKernel_ptsz)
  KG_RESOLVE(cudaLaunchKernelExC)
  KG_RESOLVE(cudaLaunchKernelExC_ptsz)
  KG_RESOLVE(cudaLaunchCooperativeKernel)
  KG_RESOLVE(cudaLaunchCooperativeKernel_ptsz)
  KG_RESOLVE(cudaGraphLaunch)
  KG_RESOLVE(cudaGraphLaunch_ptsz)
  KG_RESOLVE(cudaMemsetAsync)
  KG_RESOLVE(cudaMemsetAsync_ptsz)
  KG_RESOLVE(cudaMemset)
  KG_RESOLVE(cudaMemset_ptds)
  KG_RESOLVE(cudaMemcpyAsync)
  KG_RESOLVE(cudaMemcpyAsync_ptsz)
  KG_RESOLVE(cudaMemcpy)
  KG_RESOLVE(cudaMemcpy_ptds)
#undef KG_RESOLVE
  return install_ordering() && ok;
}

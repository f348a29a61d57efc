// What the device work watch's definitions of libcudart's entry points share (device_work.cc,
// stream_order_watch.cc): finding libcudart's own definition, and running the watch's own
// runtime queries without disturbing the caller's error state.
#pragma once

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <atomic>

namespace kg::runner::device_work {

// libcudart's definition of `name` (the next one after the runner's in lookup order).
template <typename F>
F real(std::atomic<F>& slot, const char* name) {
  F f = slot.load(std::memory_order_acquire);
  if (!f) {
    f = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
    slot.store(f, std::memory_order_release);
  }
  return f;
}

// Runs `query` (a runtime call of the watch's own) and, when it fails, takes back the error it
// leaves as the thread's last error, unless an error of the caller's was already pending: the
// watch must neither leave an error behind nor swallow one.
template <typename Q>
bool quietly(Q query) {
  const cudaError_t pending = cudaPeekAtLastError();
  if (query()) return true;
  if (pending == cudaSuccess) cudaGetLastError();
  return false;
}

// The stream an entry point queues on, as the runtime means it: a null stream is the legacy
// default stream, or the per-thread one for the _ptsz/_ptds entry points.
inline cudaStream_t named_stream(cudaStream_t s, bool per_thread_entry) {
  if (s) return s;
  return per_thread_entry ? cudaStreamPerThread : cudaStreamLegacy;
}

}  // namespace kg::runner::device_work

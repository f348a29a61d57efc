// Device work watch (no_device_work, THREATS.md B19): kg-runner defines and exports the CUDA
// runtime's kernel-launch, memset and copy entry points (device_work.cc), so the submission's
// calls into libcudart reach them first; each counts what it queues and forwards to libcudart.
// Only device-side work counts: kernel launches (<<<>>>, cudaLaunchKernel*, cooperative,
// graphs), memsets and device-to-device copies. A host-to-device copy of a result computed on
// the host, or a host function queued on a stream, is not device work.
#pragma once

#include <cstdint>

namespace kg::runner::device_work {

// Resolves libcudart's entry points (before the runner's filter tightens); false when libcudart
// is not loaded. Each entry point also resolves itself on first use.
bool install();
// Starts counting, from zero, the device work queued by any thread.
void arm();
// Stops counting; the number of device work items queued since arm().
uint64_t disarm();

}  // namespace kg::runner::device_work

// What Triton's NVIDIA driver would otherwise compile with gcc at a kernel's first launch
// (cuda_utils and a launcher per signature), written here once so that Triton runs in the
// runner's box, which refuses processes and files opened for writing (docs/sandbox.md, "Triton").
// The interpreter's prelude puts these in place of Triton's own (interpreter.cc):
//
//   load_binary(name, image, shared, device) -> (module, function, n_regs, n_spills, max_threads)
//       loads `image` with cuModuleLoadDataEx: the PTX kernelgate's Triton hands on in place of a
//       cubin (ptxas is a process; the driver's own JIT compiles the PTX in-process), the JIT's
//       error log in the exception when it fails.
//   get_device_properties(device) -> dict          the fields Triton reads.
//   launch(gx, gy, gz, stream, function, num_warps, num_ctas, shared, kinds, args, global_scratch,
//          profile_scratch)
//       one launch with cuLaunchKernel: `kinds` has one letter per value of `args` (p pointer,
//       b/h/i/l signed 8/16/32/64-bit, B/H/I/K unsigned, e fp16, r bf16, f fp32, d fp64). The
//       launch goes through kg-runner's device work watch (kg_runner_watched_driver_launch), so it
//       is counted, bracketed and checked against the call's stream order like a runtime launch.
//   driver_version() -> int                        cuDriverGetVersion.
//
// Thread-block clusters (num_ctas > 1), cooperative and programmatic-dependent launches and TMA
// descriptors are refused with kTritonUnsupported.
#pragma once

#include "py_ref.h"

#include <string>

namespace kg::runner::python {

// The module object, or an empty reference with `why` set when the driver's entry points cannot be
// found (no CUDA driver loaded in this runner). The GIL must be held; the CUDA context must exist.
PyRef triton_driver_module(std::string* why);

}  // namespace kg::runner::python

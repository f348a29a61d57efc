// cache_tampering (docs/threats.md B13), static half: the artifact imports the CUDA calls that make
// data survive the harness's L2 flush between timed calls.
//
// Why: the runner flushes L2 (and resets persisting lines) before every timed call so that no
// call finds its inputs cached. A persisting-L2 access-policy window set on a stream or a graph
// node, with the persisting carve-out raised (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize)),
// keeps the inputs resident through the flush: the kernel looks faster than memory allows.
// Resetting the persisting lines (cudaCtxResetPersistingL2Cache) is the harness's job, never
// the kernel's.
//
// Decided precisely:
//   reported  cudaStreamSetAttribute / cuStreamSetAttribute and the graph-node forms (the only
//             stream/node attributes are the access-policy window, synchronisation policy and
//             priority; a kernel needs none of them), cudaDeviceSetLimit / cuCtxSetLimit /
//             cudaThreadSetLimit (the persisting-L2 size is a limit; the others, printf FIFO and
//             malloc heap size, are debugging aids), cudaCtxResetPersistingL2Cache /
//             cuCtxResetPersistingL2Cache.
//   allowed   cudaFuncSetAttribute (dynamic shared memory above 48 KiB, the carve-out between L1
//             and shared memory: per kernel, not L2), cudaFuncSetCacheConfig, cudaLaunchKernelEx
//             (cluster launches). A launch attribute can also carry an access-policy window; that
//             form is left to the runner's device checks (docs/rules.md).
#include "kernelgate/rules.h"
#include "rule_util.h"

#include <set>

namespace kg::policy {

std::string rule_cache_tampering(const ArtifactInfo& info) {
  static const std::set<std::string> s = {"cudaStreamSetAttribute",
                                          "cuStreamSetAttribute",
                                          "cudaStreamSetAttribute_ptsz",
                                          "cuStreamSetAttribute_ptsz",
                                          "cudaGraphKernelNodeSetAttribute",
                                          "cuGraphKernelNodeSetAttribute",
                                          "cudaDeviceSetLimit",
                                          "cuCtxSetLimit",
                                          "cudaThreadSetLimit",
                                          "cudaCtxResetPersistingL2Cache",
                                          "cuCtxResetPersistingL2Cache"};
  std::vector<std::string> hits;
  for (const auto& i : info.imports)
    if (s.count(i)) hits.push_back(i);
  if (hits.empty()) return "";
  return "imports persisting-L2 / device-limit controls: " + rules::list_symbols(hits);
}

}  // namespace kg::policy

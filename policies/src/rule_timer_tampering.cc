// timer_tampering (docs/threats.md B12), static half: the artifact defines (interposes) or reads the
// clocks and synchronisation calls the timing loop relies on, can rewrite code, or is mapped
// so that its own code is writable.
//
// Why: the runner times each call with the monotonic clock (CPU) or CUDA events on its stream
// (GPU). A submission that defines clock_gettime, std::chrono::steady_clock::now,
// cudaEventElapsedTime, cudaEventRecord, cudaStreamSynchronize, ... hopes to be bound in place
// of the real one (through symbol interposition, or a later dlopen with RTLD_GLOBAL), and a
// submission that imports mprotect, pkey_mprotect or dl_iterate_phdr has what it needs to patch
// the runner's text or GOT. Text relocations (DT_TEXTREL) and writable+executable segments make
// the loader itself leave writable code behind. None of this has an honest use in a kernel.
//
// Reading a clock (importing clock_gettime, gettimeofday, time, clock, steady_clock::now,
// system_clock::now) is reported too: a kernel has no use for the time, and with it can tell a
// timed loop from a judged call (right while judged, fast while timed). The exception an honest
// kernel could hit, std::condition_variable::wait_for in a hand-made thread pool, is documented
// in docs/rules.md. Importing CUDA events or synchronisation is normal (multi-stream kernels
// record and wait on events); only DEFINING them is reported.
//
// Reading the time-stamp counter (rdtsc, rdtscp, rdpmc; aarch64's cntvct_el0) needs no import:
// the instruction is in the code. With it a kernel measures the gaps between its own calls, which
// differ between judged calls (one exchange each), warm-up (back to back) and timed calls (a cache
// flush between), and so tells them apart. The phases are not made alike; the instruction is found
// statically instead, by decoding the artifact's code (x86_decode.h), never by a byte search,
// which would also match the same bytes inside honest instructions' operands.
#include "kernelgate/rules.h"
#include "rule_util.h"

#include <map>
#include <set>

namespace kg::policy {
namespace {

// C names the artifact must never define.
bool interposable(const std::string& raw) {
  static const std::set<std::string> s = {"clock_gettime",
                                          "__clock_gettime",
                                          "__clock_gettime64",
                                          "gettimeofday",
                                          "__gettimeofday",
                                          "time",
                                          "clock",
                                          "times",
                                          "timespec_get",
                                          "ftime",
                                          "clock_getres",
                                          "__vdso_clock_gettime",
                                          "__vdso_gettimeofday",
                                          "__vdso_time",
                                          "getrusage",
                                          "syscall",
                                          "dlsym",
                                          "dlvsym",
                                          "dlopen",
                                          "mprotect",
                                          "pthread_create",
                                          "nanosleep",
                                          "clock_nanosleep",
                                          "sched_yield"};
  if (s.count(raw)) return true;
  // CUDA runtime (cudaEventRecord, cudaStreamSynchronize, ...) and driver (cuEventElapsedTime,
  // cuLaunchKernel, ...) API names, and NVTX/CUPTI: only NVIDIA's libraries define them.
  auto upper_after = [&](size_t n) { return raw.size() > n && raw[n] >= 'A' && raw[n] <= 'Z'; };
  if (raw.rfind("cuda", 0) == 0 && upper_after(4)) return true;
  // The runtime's entry points for nvcc's generated code (__cudaLaunchKernel, which <<<>>> calls;
  // __cudaPushCallConfiguration, ...): kg-runner's device work watch defines them itself.
  if (raw.rfind("__cuda", 0) == 0 && upper_after(6)) return true;
  if (raw.rfind("cu", 0) == 0 && upper_after(2)) return true;
  if (raw.rfind("cupti", 0) == 0 || raw.rfind("nvtx", 0) == 0) return true;
  return false;
}

// C++ clocks, by qualified name (std::chrono::_V2::steady_clock::now and friends).
bool clock_method(const std::string& raw) {
  const std::string q = rules::qualified_name(demangle(raw));
  if (q.rfind("std::chrono::", 0) != 0) return false;
  return q.find("clock::now") != std::string::npos;
}

bool clock_read(const std::string& raw) {
  static const std::set<std::string> s = {"clock_gettime", "__clock_gettime", "__clock_gettime64", "gettimeofday", "time",
                                          "clock",         "times",           "timespec_get",      "ftime",        "getrusage"};
  return s.count(raw) || clock_method(raw);
}

bool patching_tool(const std::string& raw) {
  static const std::set<std::string> s = {"mprotect",        "pkey_mprotect", "pkey_alloc", "pkey_set",         "dl_iterate_phdr",
                                          "_dl_find_object", "_r_debug",      "syscall",    "process_vm_writev"};
  return s.count(raw) > 0;
}

}  // namespace

std::string rule_timer_tampering(const ArtifactInfo& info) {
  std::map<std::string, std::vector<std::string>> hits;
  for (const auto& s : info.exports)
    if (interposable(s) || clock_method(s)) hits["defines (interposes) timing/runtime symbols"].push_back(s);
  for (const auto& s : info.imports) {
    if (clock_read(s)) hits["reads the clock"].push_back(s);
    if (patching_tool(s)) hits["imports code/GOT patching tools"].push_back(s);
  }
  std::string o;
  for (const auto& [how, syms] : hits) o += (o.empty() ? "" : "; ") + how + ": " + rules::list_symbols(syms);
  auto add = [&](const std::string& s) { o += (o.empty() ? "" : "; ") + s; };
  if (info.textrel) add("has text relocations (DT_TEXTREL: the loader writes into its code)");
  if (info.wx_segment) add("has a PT_LOAD segment mapped writable and executable");
  if (info.exec_stack) add("asks for an executable stack (PT_GNU_STACK with PF_X)");
  if (!info.counter_reads.empty()) {
    std::string list;
    for (const auto& r : info.counter_reads) list += (list.empty() ? "" : ", ") + r;
    add("reads the time-stamp counter: " + list);
  }
  return o;
}

}  // namespace kg::policy

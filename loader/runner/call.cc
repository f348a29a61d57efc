// Call: check what the request asks (its region, its input sets), run the calls (call_run.cc),
// and reply with the status, the evidence and the dispatched operators.
#include "call_run.h"
#include "instrument.h"
#include "kg_runner.h"

#include "kernelgate/mapping.h"

#include <ATen/core/LegacyTypeDispatch.h>

#include <sys/mman.h>

#include <exception>
#include <memory>
#include <optional>
#include <string>

namespace kg::runner {
namespace {

// Whether the input and output regions lie inside the arena and the output specs fit.
bool region_fits(const protocol::CallMsg& m) {
  return m.arena_bytes > 0 && m.input_offset <= m.arena_bytes && m.input_bytes <= m.arena_bytes - m.input_offset &&
         m.output_offset <= m.arena_bytes && m.output_capacity <= m.arena_bytes - m.output_offset &&
         m.n_outputs <= protocol::kMaxOutputSpecs;
}

// The call's memfd mapped; none when there is no descriptor or the request's region does not fit
// it. The descriptor is closed once mapped.
Mapping map_region(const protocol::CallMsg& m, UniqueFd fd) {
  if (!fd || !region_fits(m)) return Mapping();
  return Mapping(::mmap(nullptr, m.arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0), m.arena_bytes);
}

// Whether the request's sets and calls go together: one set, or several for timed calls (no more
// than there are calls), or exactly two, untimed and without warm-up, for an in-place call.
bool sets_fit_calls(const protocol::CallMsg& m) {
  const uint32_t n_sets = m.n_sets;
  if (n_sets < 1 || n_sets > protocol::kMaxInputSets) return false;
  if (m.flags & protocol::kCallSecondSetInPlace) return n_sets == 2 && m.reps == 0 && m.warmup == 0;
  return n_sets == 1 || (m.reps > 0 && n_sets <= uint64_t{m.warmup} + m.reps);
}

// A stop on precision: none, or a relative error in (0, 1) with at least one call to time first
// and no more than there are.
bool stop_fits(const protocol::CallMsg& m) {
  if (m.stop_rel_error == 0 && m.stop_min_reps == 0) return true;
  return m.stop_rel_error > 0 && m.stop_rel_error < 1 && m.stop_min_reps >= 1 && m.stop_min_reps <= m.reps;
}

// Where each input set starts, from the input region's start; nullopt when the sets do not fit
// the calls or do not exactly cover the input region.
std::optional<std::vector<size_t>> input_set_offsets(const protocol::CallMsg& m) {
  const uint32_t n_sets = m.n_sets;
  if (!sets_fit_calls(m)) return std::nullopt;
  std::vector<size_t> offset(n_sets);
  uint64_t total = 0;
  for (uint32_t k = 0; k < n_sets; ++k) {
    if (m.set_bytes[k] > m.input_bytes - total) return std::nullopt;
    offset[k] = total;
    total += m.set_bytes[k];
  }
  if (total != m.input_bytes) return std::nullopt;
  return offset;
}

// The reply to an exception out of the calls; false when the runner must exit.
bool report_exception(const std::exception& e, bool on_cuda, protocol::CallResultMsg& r) {
  bool keep_running = true;
  r.status = static_cast<uint32_t>(protocol::CallStatus::Exception);
  std::string what = e.what();
#if KG_RUNNER_CUDA
  // A CUDA error surfacing as an exception (c10::Error from a kernel's checks) may leave a
  // sticky error behind: then the context is unusable and this runner must go.
  if (on_cuda) {
    try {
      cuda_check_idle("after the op's exception");
    } catch (const DeviceError& de) {
      r.status = static_cast<uint32_t>(protocol::CallStatus::DeviceError);
      what += std::string(" / ") + de.what();
      keep_running = false;
    }
  }
#else
  (void)on_cuda;
#endif
  set_message(r.message, sizeof r.message, what);
  return keep_running;
}

}  // namespace

bool Runner::call(const protocol::CallMsg& m, UniqueFd region_fd) {
  auto r = std::make_unique<protocol::CallResultMsg>();
  protocol::init_header(*r, protocol::MsgType::CallResult);
  r->call_id = m.call_id;
  r->status = static_cast<uint32_t>(protocol::CallStatus::BadInput);
  Mapping region = map_region(m, std::move(region_fd));
  const std::optional<std::vector<size_t>> set_offset = input_set_offsets(m);
  const bool on_cuda = m.device == static_cast<uint32_t>(protocol::DeviceKind::Cuda0);
  const char* bad = !loaded_.op           ? "no op loaded"
                    : !region             ? "bad call region"
                    : !set_offset         ? "bad input sets"
                    : !stop_fits(m)       ? "bad stop on precision"
                    : (on_cuda && !cuda_) ? "cuda:0 was not set up at load"
                                          : nullptr;
  if (bad) {
    set_message(r->message, sizeof r->message, bad);
    channel_.send(*r);
    return true;
  }
  const bool keep_running = run_calls(m, region.data(), *set_offset, *r);
  observer_report(*r);
  region.reset();  // unmapped before the reply
  channel_.send(*r);
  return keep_running;
}

bool Runner::run_calls(const protocol::CallMsg& m, uint8_t* region, const std::vector<size_t>& set_offset, protocol::CallResultMsg& r) {
  try {
    // Below autograd and ADInplaceOrView, as InferenceMode dispatches, but the tensors made here
    // are normal ones: kernels may read their version counter (tensor._version()), which
    // inference tensors do not have.
    at::AutoDispatchBelowADInplaceOrView guard;
    CallRun run(m, region, set_offset, loaded_, cpu_flush_, call_no_, r);
    run.run_calls();
    run.encode_outputs();
  } catch (const DeviceError& e) {
    r.status = static_cast<uint32_t>(protocol::CallStatus::DeviceError);
    set_message(r.message, sizeof r.message, e.what());
    return false;
  } catch (const std::exception& e) { return report_exception(e, m.device == static_cast<uint32_t>(protocol::DeviceKind::Cuda0), r); }
  return true;
}

}  // namespace kg::runner

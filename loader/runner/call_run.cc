// CallRun: see call_run.h.
#include "call_run.h"

#include "instrument.h"
#include "kernelgate/prefault.h"
#include "kernelgate/timing_stop.h"
#include "kernelgate/wire.h"

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace kg::runner {
namespace {

// The directory stays open and is read again from its start: opening it per call would cost
// every call a round trip to the supervisor, which checks each open the box makes. Reopened
// when it yields no thread at all (its descriptor was closed under it).
size_t thread_count() {
  static DIR* task = nullptr;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!task && !(task = ::opendir("/proc/self/task"))) return 0;
    ::rewinddir(task);
    size_t n = 0;
    while (dirent* e = ::readdir(task))
      if (e->d_name[0] != '.') ++n;
    if (n > 0) return n;
    ::closedir(task);
    task = nullptr;
  }
  return 0;
}

// Whether the process has more threads than `before` and keeps them for a grace period. A thread
// the call joined can still be listed for a moment: the join returns when the thread's tid is
// cleared, before the kernel drops it from /proc/self/task (legit kernels that join their threads
// were flagged under load). One still there after 20 ms was left running.
bool threads_left_running(size_t before) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (thread_count() > before) {
    if (std::chrono::steady_clock::now() >= deadline) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

// Where the last input set ends, from the input region's start.
size_t input_sets_end(const protocol::CallMsg& m, const std::vector<size_t>& set_offset) {
  size_t end = 0;
  for (uint32_t k = 0; k < m.n_sets; ++k) end = std::max<size_t>(end, set_offset[k] + m.set_bytes[k]);
  return end;
}

}  // namespace

CallRun::CallRun(const protocol::CallMsg& m, uint8_t* region, const std::vector<size_t>& set_offset, const LoadedOp& loaded,
                 CpuFlush& cpu_flush, uint32_t& call_no, protocol::CallResultMsg& r)
    : m_(m),
      region_(region),
      set_offset_(set_offset),
      loaded_(loaded),
      cpu_flush_(cpu_flush),
      call_no_(call_no),
      r_(r),
      on_cuda_(m.device == static_cast<uint32_t>(protocol::DeviceKind::Cuda0)),
      n_sets_(m.n_sets),
      reps_(std::min<uint32_t>(m.reps, protocol::kMaxTimedReps)),
      input_bytes_(input_sets_end(m, set_offset)),
      set_args_(n_sets_),
      set_out_(n_sets_),
      on_device_(n_sets_) {
  r_.timer = static_cast<uint32_t>(on_cuda_ ? protocol::Timer::CudaEvent : protocol::Timer::SteadyClock);
}

void CallRun::run_calls() {
  protocol::prefault_for_reading(region_, m_.input_offset, input_bytes_);  // a hint (kernelgate/prefault.h)
  move_inputs_to_device();
  if (m_.flags & protocol::kCallSecondSetInPlace) return in_place_calls();
  for (uint32_t i = 0; i < m_.warmup; ++i) {
    untimed_call(calls_++ % n_sets_, false);
    if (i == 0) reserve_for_timed_calls();
  }
  if (reps_ == 0) return untimed_call(0, true);
  if (m_.warmup == 0) reserve_for_timed_calls();
  const bool may_stop = m_.stop_rel_error > 0;
  std::vector<double> sorted;  // the times so far in ascending order, each added where it goes
  if (may_stop) sorted.reserve(reps_);
  for (uint32_t i = 0; i < reps_; ++i) {
    timed_call(calls_++ % n_sets_);
    if (!may_stop || i + 1 == reps_) continue;
    const double t = r_.times_s[r_.n_times - 1];
    sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), t), t);
    if (protocol::timed_calls_may_stop(sorted.data(), sorted.size(), m_.stop_min_reps, m_.stop_rel_error)) break;
  }
}

std::vector<c10::IValue> CallRun::decode_set(uint32_t k, bool views) const {
  const uint8_t* set = region_ + m_.input_offset + set_offset_[k];
  return views ? wire::decode_views(set, m_.set_bytes[k]) : wire::decode(set, m_.set_bytes[k]);
}

// On cuda:0 the inputs cross to the device once, straight from the region (decoded as views of
// it, no CPU copy) and every set in one copy; each call then gets device-side copies.
void CallRun::move_inputs_to_device() {
#if KG_RUNNER_CUDA
  if (!on_cuda_) return;
  for (uint32_t k = 0; k < n_sets_; ++k) on_device_[k] = decode_set(k, /*views=*/true);
  region_views_to_cuda(region_ + m_.input_offset, input_bytes_, on_device_);
#endif
}

// On cuda:0 each set keeps its latest arguments and returns, so the timed calls hold up to
// n_sets times one call's memory. Memory the caching allocator maps during the timed calls costs
// them device time (mm f32 2048^3 on the H200: 1.30x do_bench with the allocations inside, 1.00x
// with the memory held before the first timed call), so it is mapped beforehand, from the latest
// call's footprint (or twice the inputs' before any call).
void CallRun::reserve_for_timed_calls() {
#if KG_RUNNER_CUDA
  if (!on_cuda_ || reps_ == 0) return;
  size_t per_call = 0;
  for (uint32_t k = 0; k < n_sets_; ++k)
    per_call = std::max(per_call, device_storage_bytes(set_args_[k]) + device_storage_bytes(set_out_[k]));
  if (per_call == 0) per_call = 2 * device_storage_bytes(on_device_[0]);
  constexpr size_t kMiB = size_t{1} << 20;
  cuda_reserve(n_sets_ * (per_call + 2 * kMiB) + 32 * kMiB);
#endif
}

// Every call gets its own exact copy of its set's inputs, decoded outside the timed region, so no
// call sees another's mutations, and consecutive calls see different values when the supervisor
// sent several sets.
void CallRun::fresh_args(uint32_t k) {
  std::vector<c10::IValue>& args = set_args_[k];
  // On cuda:0 the set's previous tensors go back to the caching allocator before this call.
  // On the CPU they stay until this call has returned: freed first, a large output comes back
  // as fresh pages and the call pays their page faults (21x a bare loop for relu over 1M
  // elements in bench_timing_overhead); freed inside the timed region, the call pays for
  // unmapping them (milliseconds for tens of MB).
  if (on_cuda_) {
    set_out_[k].clear();
    args.clear();
  }
#if KG_RUNNER_CUDA
  if (on_cuda_) args = cuda_fresh_copies(on_device_[k]);
  else
#endif
    args = decode_set(k);
  decoded_ = args;  // the buffers an in-place call writes into (prepare may swap in copies)
  loaded_.op->prepare(args, m_);
}

// judged: the untimed call whose outputs go back to be judged; only it pays for the wait that
// shows work left running after the call returned.
void CallRun::untimed_call(uint32_t k, bool judged) {
  fresh_args(k);
  call_untimed(k, judged);
}

// Set 0 judged, then set 1's values written into set 0's argument buffers and judged there. Set
// 0's arguments after its call are kept as exact copies, made while its buffers are still held.
void CallRun::in_place_calls() {
  untimed_call(0, true);
  std::vector<c10::IValue> buffers = decoded_;
  set_args_[0] = exact_copies(set_args_[0]);
  set_out_[0] = exact_copies(set_out_[0]);  // a return may be a view of an argument's buffer
  write_into(buffers, decode_set(1));
  set_args_[1] = std::move(buffers);
  loaded_.op->prepare(set_args_[1], m_);
  call_untimed(1, true);
}

void CallRun::call_untimed(uint32_t k, bool judged) {
  std::vector<c10::IValue>& args = set_args_[k];
  std::vector<c10::IValue>& out = set_out_[k];
  Op& op = *loaded_.op;
  const size_t threads_before = thread_count();
  const bool poison = !on_cuda_ && !(m_.flags & protocol::kCallNoPoison);
  CallWatch watch(++call_no_, loaded_.called_name, loaded_.submission, poison);
#if KG_RUNNER_CUDA
  // no_device_work: the submission's host code on cuda:0 must queue some device work.
  std::optional<DeviceWorkWatch> device_work;
  if (on_cuda_ && loaded_.host_code) device_work.emplace();
  if (on_cuda_) r_.evidence |= cuda_untimed([&] { out = op.run(args); });
  else
#endif
    out = op.run(args);
#if KG_RUNNER_CUDA
  if (device_work && device_work->finish() == 0 && holds_elements(out)) r_.evidence |= protocol::kEvidenceNoDeviceWork;
#endif
  std::optional<Snapshot> after_return;
  if (judged && !on_cuda_) {
    std::vector<c10::IValue> all(out);
    all.insert(all.end(), args.begin(), args.end());
    after_return.emplace(all);
  }
  r_.evidence |= watch.finish();
  // A thread the call left behind may still be starting: it gets a longer window.
  const auto window = std::chrono::microseconds(thread_count() > threads_before ? 20000 : 3000);
  if (after_return && after_return->changes_within(window)) r_.evidence |= protocol::kEvidenceOutputsChangedAfterReturn;
  op.finish(args);
}

void CallRun::timed_call(uint32_t k) {
  fresh_args(k);
  std::vector<c10::IValue>& args = set_args_[k];
  std::vector<c10::IValue>& out = set_out_[k];
  Op& op = *loaded_.op;
  double t = 0, idle = 0;
  uint32_t ev = 0;
  const size_t threads_before = thread_count();
  CallWatch watch(++call_no_, loaded_.called_name, loaded_.submission, false);
  if (on_cuda_) {
#if KG_RUNNER_CUDA
    ev |= cuda_before_timed(m_.flush_bytes);
    CudaTimes ct = cuda_timed([&] { out = op.run(args); });
    t = ct.call_s;
    idle = ct.idle_wait_s;
    ev |= ct.evidence;
#endif
  } else {
    ev |= cpu_flush_.run(m_.flush_bytes);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<c10::IValue> result = op.run(args);
    t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out = std::move(result);  // the set's previous outputs are freed here, outside the timed region
  }
  ev |= watch.finish();
  if (threads_left_running(threads_before)) ev |= protocol::kEvidenceThreadsLeftRunning;
  op.finish(args);
  r_.evidence |= ev;
  r_.times_s[r_.n_times] = t;
  r_.idle_wait_s[r_.n_times] = idle;
  ++r_.n_times;
}

void CallRun::encode_outputs() {
  // Timed calls that stopped on precision may not have reached every set.
  const uint32_t used = reps_ > 0 ? std::min(n_sets_, calls_) : n_sets_;
  for (uint32_t k = 0; k < used; ++k)
    if (set_out_[k].size() != loaded_.op->n_returns())
      throw std::runtime_error("op returned " + std::to_string(set_out_[k].size()) + " values");
  const uint32_t last = (m_.flags & protocol::kCallSecondSetInPlace) ? 1 : reps_ == 0 ? 0 : (calls_ - 1) % n_sets_;
  report_aliasing(set_out_[last], set_args_[last], r_);
  try {
    // Every set's values, then their pages prefaulted as one range (a hint), then the sets encoded
    // back to back; encode() copies device tensors back to the CPU.
    r_.n_sets = used;
    std::vector<std::vector<c10::IValue>> sets(used);
    size_t needed = 0;
    for (uint32_t k = 0; k < used; ++k) {
      std::vector<c10::IValue>& values = sets[k];
      values = set_out_[k];
      values.insert(values.end(), set_args_[k].begin(), set_args_[k].end());
      r_.evidence |= settle_bool_poison(values);
      needed += wire::encoded_size(values);
    }
    protocol::prefault_for_writing(region_, m_.output_offset, std::min<size_t>(needed, m_.output_capacity));
    uint64_t written = 0;
    for (uint32_t k = 0; k < used; ++k) {
      r_.set_output_bytes[k] = wire::encode(sets[k], region_ + m_.output_offset + written, m_.output_capacity - written);
      written += r_.set_output_bytes[k];
    }
    r_.output_bytes = written;
    r_.status = static_cast<uint32_t>(protocol::CallStatus::Ok);
  } catch (const wire::WireError& e) {
    r_.status = static_cast<uint32_t>(protocol::CallStatus::OutputTooLarge);
    set_message(r_.message, sizeof r_.message, e.what());
  }
}

}  // namespace kg::runner

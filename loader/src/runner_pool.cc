// RunnerPool: a thread keeps `ready` runners started and prepared; take() hands one over (or
// starts one) and the thread starts the next, except while a Quiet lives.
#include "kernelgate/runner_pool.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace kg::loader {
namespace {

// How often the clocks of waiting runners are restarted: well below their wall limit, so a runner
// that waits long in the pool is never killed for the waiting.
std::chrono::milliseconds clock_refresh(const RunnerOptions& o) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::min(5.0, o.limits.wall_s / 4) * 1000));
}
// After a runner could not be started ahead: the next try waits this long (take() starts its own
// and reports the error to its caller).
constexpr auto kRetryAfterFailure = std::chrono::seconds(2);

}  // namespace

RunnerPool::RunnerPool(Options options) : options_(std::move(options)), max_ahead_(options_.max_ahead) {
  if (options_.runner.staging_root.empty())
    throw std::invalid_argument("a runner pool needs a staging root: its runners are started before their artifacts are known");
  if (options_.ready > 0) refiller_ = std::thread([this] { refill(); });
}

RunnerPool::~RunnerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (refiller_.joinable()) refiller_.join();
  if (ender_.joinable()) ender_.join();  // ends what was retired first
  ready_.clear();                        // each one's box is killed and reaped, its folder removed
}

void RunnerPool::retire(std::unique_ptr<RunnerClient> runner) {
  if (!runner) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    retired_.push_back(std::move(runner));
    if (!ender_.joinable()) ender_ = std::thread([this] { end_retired(); });
  }
  cv_.notify_all();
}

void RunnerPool::end_retired() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return !retired_.empty() || stopping_; });
    if (retired_.empty()) return;  // stopping, and everything retired has ended
    std::unique_ptr<RunnerClient> r = std::move(retired_.front());
    retired_.pop_front();
    ending_ = true;
    lock.unlock();
    r.reset();  // kills what is left of the box and reaps it, removes its folder
    lock.lock();
    ending_ = false;
    cv_.notify_all();  // a Quiet waiting for the ends
  }
}

void RunnerPool::prepare(RunnerClient& r) const {
  if (auto err = r.prepare(options_.device))
    throw std::runtime_error("a new runner could not set up " + std::string(names::device_name(options_.device)) + ": " + err->message);
}

std::unique_ptr<RunnerClient> RunnerPool::take() {
  Waiting w;
  {
    std::unique_lock<std::mutex> lock(mu_);
    while (!ready_.empty()) {
      w = std::move(ready_.front());
      ready_.pop_front();
      cv_.notify_all();  // the refiller starts the next one
      if (!w.runner->exited()) break;
      ++stats_.discarded;
      w.runner.reset();
    }
    if (w.runner) ++stats_.taken_ready;
    else ++stats_.taken_cold;
  }
  if (!w.runner) {
    w.runner = RunnerClient::start(options_.runner);
  } else {
    w.runner->restart_clock();
  }
  if (!w.prepared) prepare(*w.runner);
  return std::move(w.runner);
}

void RunnerPool::refill() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    for (auto& w : ready_) w.runner->restart_clock();
    // A started runner is prepared next (on the CPU once nothing is timed); prepared ones stay
    // first in line.
    auto unprepared = std::find_if(ready_.begin(), ready_.end(), [](const Waiting& w) { return !w.prepared; });
    const bool may_touch = quiet_ == 0 || beside_timing();
    if (may_touch && unprepared != ready_.end()) {
      Waiting w = std::move(*unprepared);
      ready_.erase(unprepared);
      preparing_ = true;
      lock.unlock();
      bool ok = true;
      try {
        prepare(*w.runner);
      } catch (const std::exception&) { ok = false; }
      lock.lock();
      preparing_ = false;
      cv_.notify_all();  // a Quiet waiting for this preparation
      if (ok) {
        w.prepared = true;
        ready_.push_front(std::move(w));
      } else {
        ++stats_.discarded;  // a device that cannot be set up is not retried at once, start after start
        cv_.wait_for(lock, kRetryAfterFailure, [this] { return stopping_; });
      }
      continue;
    }
    // A runner take() started itself (none was ready yet) counts too: it took the place of one ahead.
    const bool spent = max_ahead_ > 0 && stats_.started_ahead + stats_.taken_cold >= max_ahead_;
    if (!may_touch || ready_.size() >= options_.ready || spent) {
      cv_.wait_for(lock, clock_refresh(options_.runner));
      continue;
    }
    starting_ = true;
    ++stats_.started_ahead;
    lock.unlock();
    std::unique_ptr<RunnerClient> r;
    try {
      r = RunnerClient::start(options_.runner);
    } catch (const std::exception&) { r.reset(); }
    lock.lock();
    starting_ = false;
    cv_.notify_all();  // a Quiet waiting for this start
    if (r) {
      ready_.push_back(Waiting{std::move(r), false});
    } else {
      ++stats_.discarded;
      cv_.wait_for(lock, kRetryAfterFailure, [this] { return stopping_; });
    }
  }
}

bool RunnerPool::serves(const RunnerOptions& o) const {
  const RunnerOptions& p = options_.runner;
  return o.runner_path == p.runner_path && o.profile == p.profile && o.gpu == p.gpu && o.limits.cpu_s == p.limits.cpu_s &&
         o.limits.wall_s == p.limits.wall_s && o.limits.memory_mb == p.limits.memory_mb &&
         o.limits.max_processes == p.limits.max_processes && o.limits.max_open_files == p.limits.max_open_files &&
         o.limits.max_file_mb == p.limits.max_file_mb && o.limits.max_output_bytes == p.limits.max_output_bytes &&
         o.limits.scratch_mb == p.limits.scratch_mb;
}

void RunnerPool::bound_ahead(size_t runners) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    max_ahead_ = std::max<size_t>({runners, stats_.started_ahead + stats_.taken_cold, 1});
  }
  cv_.notify_all();
}

RunnerPool::Stats RunnerPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.ready_now = ready_.size();
  return s;
}

RunnerPool::Quiet::Quiet(RunnerPool* pool) : pool_(pool) {
  if (!pool_) return;
  std::unique_lock<std::mutex> lock(pool_->mu_);
  ++pool_->quiet_;
  pool_->cv_.wait(lock, [this] { return !pool_->device_busy(); });
}

RunnerPool::Quiet::~Quiet() {
  if (!pool_) return;
  {
    std::lock_guard<std::mutex> lock(pool_->mu_);
    --pool_->quiet_;
  }
  pool_->cv_.notify_all();
}

}  // namespace kg::loader

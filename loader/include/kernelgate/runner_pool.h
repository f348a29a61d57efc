// Runners started ahead of their work. A runner's start (the sandbox, libtorch, the CUDA context)
// costs as much as judging a small op; a pool keeps a few started and prepared while other work
// runs, so that taking one costs only the copy of an artifact into its folder.
//
// Isolation is exactly as without a pool: every runner taken is new, is handed to one caller, and
// is never returned to the pool; it loads nothing but what its caller stages into its own
// read-only folder (RunnerOptions::staging_root). Its wall-clock limit restarts when taken.
#pragma once

#include "kernelgate/loader.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace kg::loader {

class RunnerPool {
 public:
  struct Options {
    RunnerOptions runner;         // staging_root is required; ro_binds must not name an artifact's folder
    Device device = Device::Cpu;  // what each runner prepares before it waits
    size_t ready = 1;             // runners kept started and prepared (0: the pool only starts on demand)
    // At most this many runners over the pool's life, started ahead or on demand by take() (0:
    // no bound), for a caller that knows how many it will take: none is started only to be
    // thrown away at the end.
    size_t max_ahead = 0;
  };
  struct Stats {
    uint64_t taken_ready = 0;    // taken from the runners started ahead
    uint64_t taken_cold = 0;     // started on demand: none was ready
    uint64_t discarded = 0;      // a runner started ahead that had died or failed to prepare
    uint64_t started_ahead = 0;  // runners the pool started ahead, in all
    uint64_t ready_now = 0;      // started and waiting now
  };

  // Throws std::invalid_argument when options.runner has no staging_root.
  explicit RunnerPool(Options options);
  ~RunnerPool();  // stops starting runners and shuts down the ready ones
  RunnerPool(const RunnerPool&) = delete;
  RunnerPool& operator=(const RunnerPool&) = delete;

  // A runner nobody else has had: a ready one (its wall clock restarted now) when there is one,
  // else one started (and prepared) now. Throws what RunnerClient::start throws.
  std::unique_ptr<RunnerClient> take();

  // Whether runners started with `o` would be this pool's (the same runner, profile, GPU and
  // limits): a caller with other options starts its own.
  bool serves(const RunnerOptions& o) const;

  // Ends a runner its caller is done with (after RunnerClient::finish_answered) on a thread of the
  // pool's, beside the caller's next work: its box's teardown (the process's memory, a CUDA
  // context) is no one's wait but a Quiet's and the pool's destructor's. Any runner may be
  // retired here, taken from the pool or not.
  void retire(std::unique_ptr<RunnerClient> runner);

  // The pool's owner now knows it will take `runners` in all (a pool started before its
  // evaluation's ops were known): from here on at most that many are started over the pool's
  // life, ahead or on demand (Options::max_ahead), never fewer than were started already.
  void bound_ahead(size_t runners);

  // While a Quiet lives, the pool touches the device with no runner: on the CPU no runner starts
  // or prepares at all (its start-up is CPU work, which would move CPU timings); what was under
  // way has finished when the Quiet is made. On every device the runners retired before it have
  // ended when it is made (a teardown frees device memory). On cuda a Quiet holds no start back: a runner's
  // start-up there is host work on other cores, and its device set-up (a CUDA context, its flush
  // buffer, one one-element kernel) was measured on the H200 not to move timed calls beside it
  // (tools/context-beside-timing.py, docs/batches.md). Submission code is never loaded by the
  // pool: that waits for the caller, under the device lock.
  class Quiet {
   public:
    explicit Quiet(RunnerPool* pool);
    ~Quiet();
    Quiet(const Quiet&) = delete;
    Quiet& operator=(const Quiet&) = delete;

   private:
    RunnerPool* pool_;
  };

  Stats stats() const;

 private:
  struct Waiting {
    std::unique_ptr<RunnerClient> runner;
    bool prepared = false;
  };
  void refill();
  void end_retired();
  void prepare(RunnerClient& r) const;  // throws when the runner cannot set its device up
  // Whether a runner's start or preparation under way now would share the device with timed
  // calls (mu_ held).
  bool device_busy() const { return (!beside_timing() && (preparing_ || starting_)) || !retired_.empty() || ending_; }
  bool beside_timing() const { return options_.device == Device::Cuda; }

  const Options options_;
  mutable std::mutex mu_;
  size_t max_ahead_;  // options_.max_ahead until bound_ahead()
  std::condition_variable cv_;
  std::deque<Waiting> ready_;  // prepared ones first
  Stats stats_;
  int quiet_ = 0;
  bool starting_ = false;
  bool preparing_ = false;
  bool stopping_ = false;
  std::thread refiller_;
  std::deque<std::unique_ptr<RunnerClient>> retired_;  // waiting for the ender
  bool ending_ = false;                                // the ender is ending one now
  std::thread ender_;                                  // started by the first retire()
};

}  // namespace kg::loader

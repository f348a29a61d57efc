// Inputs drawn ahead: an op's large draws (the trials' largest sample scaled up, the timing's
// value sets) made on a thread of their own while the op does other work, with the same
// make_inputs on the same seed, so the caller takes exactly the values it would have drawn
// itself, sooner.
#pragma once

#include "kernelgate/harness.h"

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

#include <atomic>
#include <cstdint>
#include <future>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace kg::harness {

// make_inputs ended part-way because its `stop` was set.
struct DrawStopped : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// make_inputs that ends a large draw with DrawStopped once `stop` (when given) is set.
std::vector<c10::IValue> make_inputs(const c10::FunctionSchema& schema, const Sample& sample, std::mt19937_64& rng,
                                     const std::atomic<bool>* stop);

namespace evaluation {

// False when KERNELGATE_DRAWS_AHEAD=0: every draw made where it is used, as before (an A/B of
// this class's effect: tools/bench-latency.py --daemon-b KERNELGATE_DRAWS_AHEAD=0).
bool draws_ahead_enabled();

class DrawsAhead {
 public:
  // One draw: `sample`'s inputs from `rng` (the generator the trial would seed for `seed_index`).
  struct Want {
    size_t seed_index = 0;
    Sample sample;
    std::mt19937_64 rng;
  };

  // Starts drawing `wants`, in order, on a thread of its own. `schema` outlives this.
  DrawsAhead(const c10::FunctionSchema& schema, std::vector<Want> wants);
  // Stops a draw under way (within 2^16 elements) and waits for the thread.
  ~DrawsAhead();
  DrawsAhead(const DrawsAhead&) = delete;
  DrawsAhead& operator=(const DrawsAhead&) = delete;

  // The inputs drawn ahead for `sample` at `seed_index`, waiting for them if still being drawn;
  // nullopt when none were wanted for exactly that (or they were taken already). Throws what the
  // draw threw, as the trial's own make_inputs would have.
  std::optional<std::vector<c10::IValue>> take(size_t seed_index, const Sample& sample);

  // Waits until every draw is made (or has failed): no draw runs after it returns.
  void finish();

  // Whether every one of `wants` is being drawn here (and not taken yet).
  bool has_all(const std::vector<Want>& wants);

  // How many draws were taken: for tests.
  int taken() const { return taken_; }

 private:
  struct Entry {
    size_t seed_index = 0;
    std::string key;  // everything of the sample that make_inputs reads
    std::future<std::vector<c10::IValue>> inputs;
  };
  // The entry not taken yet for `sample` at `seed_index`, or null.
  Entry* find(size_t seed_index, const Sample& sample);

  std::vector<Entry> entries_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  int taken_ = 0;
};

}  // namespace evaluation
}  // namespace kg::harness

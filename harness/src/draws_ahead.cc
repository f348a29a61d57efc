#include "draws_ahead.h"

#include "kernelgate/trace.h"

#include <algorithm>
#include <cstdlib>
#include <exception>

namespace kg::harness::evaluation {
namespace {

// Everything make_inputs reads of a sample: the op, the call, the value family, the storage
// offsets and the value rules.
std::string sample_key(const Sample& s) {
  std::string key = s.op + "|" + trace::format_call(s.call) + "|" + std::to_string(static_cast<int>(s.family)) + "|";
  for (int64_t o : s.storage_offsets) key += std::to_string(o) + ",";
  for (const ArgRule& r : s.rules)
    key += "|" + r.arg + ":" + std::to_string(static_cast<int>(r.rule)) + ":" + std::to_string(r.bound) + ":" + r.bound_arg + ":" +
           r.size_of + ":" + std::to_string(r.dim) + ":" + r.dim_arg + ":" + std::to_string(r.numel) + std::to_string(r.trailing_product) +
           std::to_string(r.per_list_position) + ":" + std::to_string(r.unique_trailing);
  return key;
}

}  // namespace

bool draws_ahead_enabled() {
  const char* e = std::getenv("KERNELGATE_DRAWS_AHEAD");
  return !(e && std::string(e) == "0");
}

DrawsAhead::DrawsAhead(const c10::FunctionSchema& schema, std::vector<Want> wants) {
  std::vector<std::promise<std::vector<c10::IValue>>> promises(wants.size());
  for (size_t k = 0; k < wants.size(); ++k)
    entries_.push_back({wants[k].seed_index, sample_key(wants[k].sample), promises[k].get_future()});
  thread_ = std::thread([this, &schema, wants = std::move(wants), promises = std::move(promises)]() mutable {
    for (size_t k = 0; k < wants.size(); ++k) {
      try {
        if (stop_.load(std::memory_order_relaxed)) throw DrawStopped("the draw was stopped");
        promises[k].set_value(make_inputs(schema, wants[k].sample, wants[k].rng, &stop_));
      } catch (...) { promises[k].set_exception(std::current_exception()); }
    }
  });
}

DrawsAhead::~DrawsAhead() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

void DrawsAhead::finish() {
  if (thread_.joinable()) thread_.join();
}

DrawsAhead::Entry* DrawsAhead::find(size_t seed_index, const Sample& sample) {
  const std::string key = sample_key(sample);
  for (Entry& e : entries_)
    if (e.seed_index == seed_index && e.key == key && e.inputs.valid()) return &e;
  return nullptr;
}

bool DrawsAhead::has_all(const std::vector<Want>& wants) {
  return std::all_of(wants.begin(), wants.end(), [&](const Want& w) { return find(w.seed_index, w.sample) != nullptr; });
}

std::optional<std::vector<c10::IValue>> DrawsAhead::take(size_t seed_index, const Sample& sample) {
  Entry* e = find(seed_index, sample);
  if (!e) return std::nullopt;
  ++taken_;
  return e->inputs.get();
}

}  // namespace kg::harness::evaluation

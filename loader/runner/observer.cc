// The dispatcher observer: see instrument.h.
#include "instrument.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace kg::runner {
namespace {

std::atomic<bool> g_armed{false};
std::atomic<bool> g_note{false};     // false in self-check: the called op is aten's own, and so is all it dispatches
std::atomic<uint64_t> g_started{0};  // every operator start the callback saw
std::atomic<bool> g_called_seen{false};
std::mutex g_mu;
char g_called[protocol::kDispatchedNameBytes] = {};  // written only while disarmed
std::vector<std::string> g_names;                    // distinct, in first-seen order, at most kMaxDispatched
bool g_overflow = false;

// Per thread: how deep in dispatched operators, and whether the outermost one is the called op.
thread_local int t_depth = 0;
thread_local bool t_in_called = false;
// Per depth: whether the operators started inside the one at that depth are the kernel's own
// calls, to be noted. Inside the called op, yes; inside one of those, only when it is not aten's
// (a custom op the kernel registered or built with load_inline: what it dispatches is still the
// kernel's doing, where an aten operator's own inner calls are PyTorch's).
constexpr int kMaxNotedDepth = 64;
thread_local bool t_children_noted[kMaxNotedDepth] = {};

bool is_aten(const char* name) { return std::strncmp(name, "aten::", 6) == 0; }

void note(const char* raw) {
  // Names are whatever reached RecordFunction; the report carries printable ASCII only.
  std::string name(raw, strnlen(raw, protocol::kDispatchedNameBytes - 1));
  for (char& c : name)
    if (c <= 32 || c >= 127) c = '?';
  if (name.empty()) name = "?";
  std::lock_guard<std::mutex> lock(g_mu);
  if (std::find(g_names.begin(), g_names.end(), name) != g_names.end()) return;
  if (g_names.size() < protocol::kMaxDispatched) g_names.emplace_back(name);
  else g_overflow = true;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  g_started.fetch_add(1, std::memory_order_relaxed);
  const int depth = t_depth++;
  bool children = false;
  if (g_armed.load(std::memory_order_acquire)) {
    const bool keep = g_note.load(std::memory_order_relaxed);
    const char* name = fn.name();
    if (!name) name = "?";
    if (depth == 0) {
      t_in_called = std::strncmp(g_called, name, sizeof g_called) == 0;
      if (t_in_called) g_called_seen.store(true, std::memory_order_relaxed);
      else if (keep) note(name);
      children = t_in_called;
    } else if (depth < kMaxNotedDepth && t_in_called && t_children_noted[depth - 1]) {
      if (keep) note(name);
      children = !is_aten(name);
    }
  }
  if (depth < kMaxNotedDepth) t_children_noted[depth] = children;
  return nullptr;
}

void on_end(const at::RecordFunction&, at::ObserverContext*) {
  if (t_depth > 0) --t_depth;
}

}  // namespace

void observer_install() { at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end).scopes({at::RecordScope::FUNCTION})); }

void observer_arm(const std::string& called_op, bool note_dispatches) {
  g_note.store(note_dispatches, std::memory_order_relaxed);
  const size_t len = std::min(called_op.size(), sizeof g_called - 1);
  std::memcpy(g_called, called_op.data(), len);
  g_called[len] = 0;
  g_called_seen.store(false, std::memory_order_relaxed);
  t_depth = 0;
  t_in_called = false;
  g_armed.store(true, std::memory_order_release);
}

bool observer_disarm(bool expect_called) {
  g_armed.store(false, std::memory_order_release);
  t_depth = 0;
  const uint64_t before = g_started.load(std::memory_order_relaxed);
  // The canary: an operator dispatched now must reach the callback.
  (void)at::empty({0}, at::TensorOptions().dtype(at::kFloat));
  const bool canary = g_started.load(std::memory_order_relaxed) > before;
  t_depth = 0;
  return canary && (!expect_called || g_called_seen.load(std::memory_order_relaxed));
}

void observer_report(protocol::CallResultMsg& r) {
  std::lock_guard<std::mutex> lock(g_mu);
  r.n_dispatched = 0;
  for (const std::string& n : g_names) {
    const size_t len = std::min<size_t>(n.size(), protocol::kDispatchedNameBytes - 1);
    std::memcpy(r.dispatched[r.n_dispatched], n.data(), len);
    r.dispatched[r.n_dispatched][len] = 0;
    ++r.n_dispatched;
  }
  if (g_overflow) r.evidence |= protocol::kEvidenceDispatchedOverflow;
  g_names.clear();
  g_overflow = false;
}

}  // namespace kg::runner

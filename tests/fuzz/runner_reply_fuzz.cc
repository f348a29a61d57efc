// libFuzzer target for the supervisor's check of a runner's CallResult (check_call_reply,
// loader/src/runner_reply.h), the output region's decoding included. The runner is untrusted:
// whatever reply and region bytes it sends, the check must return an outcome or a violation
// naming a field, never crash, over-read or allocate without bound, and a reply it accepts must
// hold what was asked for.
//
// The input is read as the fields the check reads, in its order, so that short inputs reach
// every step (a whole CallResultMsg is about 30 KB): what the call asked for (timed calls,
// sets, arguments, returns), then the reply's counts, times, timer, evidence, operator names,
// aliasing and extents, then a piece of its message; the rest is the output region.
//
// Seeds: tests/fuzz/corpus_runner_reply, valid replies in this layout (regenerate with
// KG_REPLY_WRITE_SEEDS=DIR runner_reply_fuzz).
#include "runner_reply.h"

#include "kernelgate/protocol.h"
#include "kernelgate/wire.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace protocol = kg::protocol;

// Takes fields off the front of the input; zeros once it runs out.
class Fields {
 public:
  Fields(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  template <typename T>
  T take() {
    T v{};
    copy(&v, sizeof v);
    return v;
  }
  void copy(void* dst, size_t n) {
    const size_t k = std::min(n, n_);
    if (k) std::memcpy(dst, p_, k);
    p_ += k;
    n_ -= k;
  }
  const uint8_t* rest() const { return p_; }
  size_t left() const { return n_; }

 private:
  const uint8_t* p_;
  size_t n_;
};

constexpr uint32_t kMaxSets = 4;   // enough to exercise the sets' extents
constexpr uint32_t kMaxTimes = 8;  // times past these stay 0 (valid)

// A valid input: a timed call of `sets` sets, each set's returns then its arguments.
class Seed {
 public:
  template <typename T>
  void put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes_.insert(bytes_.end(), p, p + sizeof v);
  }
  void write(const std::string& path, const std::vector<std::vector<c10::IValue>>& sets, size_t n_returns) {
    const uint32_t reps = 2;
    put<uint16_t>(reps);
    put<uint8_t>(static_cast<uint8_t>(sets.size() - 1));
    put<uint8_t>(static_cast<uint8_t>(sets[0].size() - n_returns));
    put<uint8_t>(static_cast<uint8_t>(n_returns));
    put<uint64_t>(1);  // call_id
    put<uint32_t>(static_cast<uint32_t>(protocol::CallStatus::Ok));
    put<uint32_t>(reps);
    for (uint32_t i = 0; i < reps; ++i) {
      put<double>(1e-4);
      put<double>(0);
    }
    put<uint32_t>(static_cast<uint32_t>(protocol::Timer::SteadyClock));
    put<uint32_t>(protocol::kEvidenceThreadsLeftRunning);
    const std::string op = "aten::add";
    put<uint32_t>(1);
    put<uint8_t>(static_cast<uint8_t>(op.size()));
    bytes_.insert(bytes_.end(), op.begin(), op.end());
    put<uint32_t>(static_cast<uint32_t>(n_returns));
    for (size_t i = 0; i < n_returns; ++i) put<int32_t>(protocol::kAliasNone);
    std::vector<std::vector<uint8_t>> encoded;
    uint64_t total = 0;
    for (const auto& set : sets) {
      std::vector<uint8_t>& e = encoded.emplace_back(kg::wire::encoded_size(set));
      e.resize(kg::wire::encode(set, e.data(), e.size()));
      total += e.size();
    }
    put<uint32_t>(static_cast<uint32_t>(sets.size()));
    put<uint64_t>(total);
    for (uint32_t k = 0; k < kMaxSets; ++k) put<uint64_t>(k < sets.size() ? encoded[k].size() : 0);
    char message[32] = {};
    bytes_.insert(bytes_.end(), message, message + sizeof message);
    for (const auto& e : encoded) bytes_.insert(bytes_.end(), e.begin(), e.end());
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();
    std::fwrite(bytes_.data(), 1, bytes_.size(), f);
    std::fclose(f);
  }

 private:
  std::vector<uint8_t> bytes_;
};

void write_seeds(const std::string& dir) {
  const at::Tensor a = at::arange(6, at::kFloat).reshape({2, 3});
  Seed().write(dir + "/one_set", {{a.relu(), a}}, 1);
  Seed().write(dir + "/two_sets", {{a + 1, a, c10::IValue(2.0)}, {a * 2, a.t(), c10::IValue(0.5)}}, 1);
  Seed().write(dir + "/no_returns", {{a}}, 0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* d = std::getenv("KG_REPLY_WRITE_SEEDS")) {
    write_seeds(d);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fields in(data, size);
  kg::loader::ReplyExpectation expect;
  expect.call_id = 1;
  expect.reps = in.take<uint16_t>() % (protocol::kMaxTimedReps + 1);
  expect.n_sets = 1 + in.take<uint8_t>() % kMaxSets;
  expect.n_args = in.take<uint8_t>() % 4;
  expect.n_returns = in.take<uint8_t>() % 4;
  expect.supervisor_wall_s = 1.0;

  auto r = std::make_unique<protocol::CallResultMsg>();
  protocol::init_header(*r, protocol::MsgType::CallResult);
  r->call_id = in.take<uint64_t>();
  r->status = in.take<uint32_t>();
  r->n_times = in.take<uint32_t>();
  for (uint32_t i = 0; i < std::min(r->n_times, kMaxTimes); ++i) {
    r->times_s[i] = in.take<double>();
    r->idle_wait_s[i] = in.take<double>();
  }
  r->timer = in.take<uint32_t>();
  r->evidence = in.take<uint32_t>();
  r->n_dispatched = in.take<uint32_t>();
  for (uint32_t i = 0; i < std::min(r->n_dispatched, protocol::kMaxDispatched); ++i) {
    const uint8_t len = in.take<uint8_t>();  // a name's bytes, NUL-terminated only when shorter
    in.copy(r->dispatched[i], std::min<size_t>(len, protocol::kDispatchedNameBytes));
  }
  r->n_return_alias = in.take<uint32_t>();
  for (uint32_t i = 0; i < std::min(r->n_return_alias, protocol::kMaxReturnAlias); ++i) r->return_alias[i] = in.take<int32_t>();
  r->n_sets = in.take<uint32_t>();
  r->output_bytes = in.take<uint64_t>();
  for (uint32_t k = 0; k < kMaxSets; ++k) r->set_output_bytes[k] = in.take<uint64_t>();
  in.copy(r->message, 32);

  // The region on the heap at its exact size, so that any read past it is an ASan report.
  std::unique_ptr<uint8_t[]> region(new uint8_t[std::max<size_t>(in.left(), 1)]);
  if (in.left()) std::memcpy(region.get(), in.rest(), in.left());
  const kg::loader::CheckedReply c = kg::loader::check_call_reply(*r, expect, region.get(), in.left());

  if (c.violation) {
    if (c.violation->field.empty() || c.violation->message.empty()) std::abort();
    return 0;
  }
  const kg::loader::CallOutcome& out = c.outcome;
  if (out.kind == kg::loader::CallOutcome::Kind::Ok) {
    // Accepted: exactly what was asked for came back.
    if (out.returns.size() != expect.n_returns || out.args_after.size() != expect.n_args) std::abort();
    if (out.more.size() != expect.n_sets - 1) std::abort();
    if (out.times_s.size() != r->n_times || out.times_s.size() > expect.reps) std::abort();
    if (out.dispatched.size() != r->n_dispatched || out.return_alias.size() != r->n_return_alias) std::abort();
    for (double t : out.times_s)
      if (!(t >= 0) || t > expect.supervisor_wall_s) std::abort();
  } else if (out.kind != kg::loader::CallOutcome::Kind::OpError && out.kind != kg::loader::CallOutcome::Kind::Died) {
    std::abort();
  }
  return 0;
}

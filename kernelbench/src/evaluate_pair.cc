// A KernelBench pair judged: the problem's runner makes the inputs and the reference's outputs,
// the solution's runner (another process) the candidate's, and the supervisor compares them,
// reads what the runner saw around each call, and times both forwards the same way.
#include "kernelgate/kernelbench.h"

#include "kernelgate/loader.h"
#include "kernelgate/protocol.h"
#include "kernelgate/remove_tree.h"
#include "model_inputs.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace kg::kernelbench {
namespace {

using harness::Failure;
using harness::OpResult;
using loader::CallOutcome;
using policy::Category;
using policy::Rule;
using protocol::ModelAction;
using Clock = std::chrono::steady_clock;

// get_inputs() draws per pair, each under its own seed.
constexpr int kSeedDraws = 3;

// The overload whose tolerances a pair's outputs are judged at. A KernelBench forward composes ops,
// and most of them accumulate (matrix products, convolutions, reductions), so an honest solution
// may sum in another order than eager: it gets the policy's bound for an accumulating op (mm's,
// which still rejects inputs rounded to TF32 or bf16, docs/policies.md), never the bare dtype
// default that one reordered float32 sum already exceeds.
constexpr const char* kToleranceOf = "mm.default";

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A seed for torch.manual_seed derived from the evaluation's secret seed (an int64 on the wire).
uint64_t derived_seed(uint64_t seed, uint64_t k) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (k + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (z ^ (z >> 31)) & ((1ull << 62) - 1);
}

std::vector<c10::IValue> model_call(ModelAction action, uint64_t seed, const std::vector<at::Tensor>& tensors) {
  c10::List<at::Tensor> list;
  for (const at::Tensor& t : tensors) list.push_back(t);
  return {c10::IValue(static_cast<int64_t>(action)), c10::IValue(static_cast<int64_t>(seed)), c10::IValue(std::move(list))};
}

// A model call's one return (a list of tensors), or nullopt when it is not one.
std::optional<std::vector<at::Tensor>> tensors_of(const std::vector<c10::IValue>& returns) {
  if (returns.size() != 1 || !returns[0].isTensorList()) return std::nullopt;
  return returns[0].toTensorVector();
}

struct Sample {
  std::string label;   // "get_inputs() draw 2", "non-contiguous copies of draw 0"
  std::string family;  // results.json's `family`: normal, special
  unsigned traits = 0;
  int index = 0;
  std::vector<at::Tensor> inputs, reference;
};

// One side's runner: the problem's or the solution's, each in its own box with its own staged file.
class Side {
 public:
  Side(const harness::EvalOptions& options, const policy::Policy& policy, const std::string& staging_root) {
    loader::RunnerOptions ro = harness::runner_options(options, policy, "");
    ro.staging_root = staging_root;
    client_ = loader::RunnerClient::start(ro);
  }
  ~Side() {
    if (client_) client_->finish();
  }
  Side(const Side&) = delete;
  Side& operator=(const Side&) = delete;

  // Stages `file` and loads it as `model`; the reply's text (a problem's constructor arguments)
  // into `said`. Returns the load error's message, or "".
  std::optional<loader::LoadError> load(const std::string& file, loader::LoadRequest::Model model, uint64_t seed, const std::string& init,
                                        std::string* said) {
    loader::LoadRequest req;
    try {
      req.artifact = client_->stage(file);
    } catch (const std::exception& e) { return loader::LoadError{loader::LoadError::Kind::Refused, e.what()}; }
    req.registered_op = model == loader::LoadRequest::Model::Problem ? "kgref::model" : "kgsub::model";
    req.kind = loader::Kind::Python;
    req.model = model;
    req.model_seed = seed;
    req.model_init = init;
    return client_->load(req, said);
  }
  loader::RunnerClient& client() { return *client_; }

 private:
  std::unique_ptr<loader::RunnerClient> client_;
};

std::string outcome_text(const CallOutcome& out) {
  return out.message.empty() ? std::string(sandbox::status_name(out.record.status)) : out.message;
}

class PairJudge {
 public:
  PairJudge(const Pair& pair, const harness::EvalOptions& options, const policy::Policy& policy, uint64_t seed)
      : pair_(pair), options_(options), policy_(policy), seed_(seed) {
    r_.op = pair.name;
    r_.kind = "python";
    r_.suite = kSuite;
  }

  OpResult run() {
    const auto t0 = Clock::now();
    const fs::path staging = fs::path(options_.out_dir) / ".runners-kernelbench";
    std::error_code ec;
    fs::create_directories(staging, ec);
    try {
      judge(staging.string());
    } catch (const std::exception& e) {
      if (r_.error.empty()) r_.error = std::string("kernelgate could not judge this pair: ") + e.what();
    }
    loader::remove_tree(staging.string(), ec);
    harness::decide_verdict(r_, policy_);
    r_.eval_s = seconds_since(t0);
    return std::move(r_);
  }

 private:
  void judge(const std::string& staging) {
    auto t = Clock::now();
    Side problem(options_, policy_, staging);
    std::string init;
    if (auto e = problem.load(pair_.problem, loader::LoadRequest::Model::Problem, derived_seed(seed_, 100), "", &init)) {
      r_.error = "the problem's fault: " + pair_.problem + " cannot be loaded: " + e->message;
      return;
    }
    if (!make_samples(problem)) return;
    const std::optional<std::vector<at::Tensor>> state = model_state(problem);
    if (!state) return;
    Side solution(options_, policy_, staging);
    r_.runner_start_s = seconds_since(t);
    std::string ignored;
    if (auto e = solution.load(pair_.solution, loader::LoadRequest::Model::Solution, derived_seed(seed_, 100), init, &ignored)) {
      fail_to_load(*e);
      return;
    }
    r_.ran = true;
    take_state(solution, *state);
    std::vector<std::optional<std::vector<at::Tensor>>> outputs;
    std::vector<bool> right;
    for (const Sample& s : samples_) {
      const int passed = r_.passed;
      outputs.push_back(judge_sample(solution, s));
      right.push_back(r_.passed > passed);
    }
    replayed(outputs, right);
    if (options_.timing && r_.failures.empty() && r_.passed == r_.total && !samples_.empty()) {
      t = Clock::now();
      time_forward(problem, solution, samples_[0]);
      r_.timing_s = seconds_since(t);
    } else if (!options_.timing) {
      r_.timing_skipped = "timing off (--no-timing)";
    }
  }

  // The problem's own fault: a call of the reference that did not answer as it should.
  bool problem_call(Side& problem, const std::vector<c10::IValue>& args, const char* what, std::vector<at::Tensor>* out) {
    const CallOutcome o = problem.client().call(args, 1, policy_.run_call_time_s);
    if (o.kind != CallOutcome::Kind::Ok) {
      r_.error = std::string("the problem's fault: ") + what + " failed: " + outcome_text(o);
      return false;
    }
    auto tensors = tensors_of(o.returns);
    if (!tensors) {
      r_.error = std::string("the problem's fault: ") + what + " returned no list of tensors";
      return false;
    }
    *out = std::move(*tensors);
    return true;
  }

  bool make_samples(Side& problem) {
    for (int k = 0; k < kSeedDraws; ++k) {
      Sample s;
      s.label = "get_inputs() draw " + std::to_string(k);
      s.family = "normal";
      s.index = k;
      if (!problem_call(problem, model_call(ModelAction::Inputs, derived_seed(seed_, k), {}), "get_inputs()", &s.inputs)) return false;
      if (!problem_call(problem, model_call(ModelAction::Forward, 0, s.inputs), "Model.forward", &s.reference)) return false;
      samples_.push_back(std::move(s));
    }
    Sample strided;
    strided.label = "non-contiguous copies of draw 0";
    strided.family = "normal";
    strided.traits = static_cast<unsigned>(harness::InputTrait::NonContiguous);
    strided.index = kSeedDraws;
    strided.inputs = non_contiguous_copies(samples_[0].inputs);
    if (!problem_call(problem, model_call(ModelAction::Forward, 0, strided.inputs), "Model.forward", &strided.reference)) return false;
    samples_.push_back(std::move(strided));
    Sample special;
    special.label = "draw 0 with zeros, -0.0, +-1e4 and tiny values";
    special.family = "special";
    special.traits = static_cast<unsigned>(harness::InputTrait::SpecialValues);
    special.index = kSeedDraws + 1;
    bool changed = false;
    special.inputs = with_special_values(samples_[0].inputs, derived_seed(seed_, 200), &changed);
    if (changed) {
      if (!problem_call(problem, model_call(ModelAction::Forward, 0, special.inputs), "Model.forward", &special.reference)) return false;
      // Where the reference itself leaves the finite numbers, the problem does not allow these values.
      if (all_finite(special.reference)) samples_.push_back(std::move(special));
      else r_.skipped.push_back({describe_inputs(special.inputs), special.label + ": Model's own outputs are not finite on these values"});
    }
    return true;
  }

  std::optional<std::vector<at::Tensor>> model_state(Side& problem) {
    std::vector<at::Tensor> state;
    if (!problem_call(problem, model_call(ModelAction::State, 0, {}), "Model.state_dict()", &state)) return std::nullopt;
    return state;
  }

  // Both models were built under the same seed; the reference's parameters are copied over the
  // solution's as well when its state_dict lines up, so that differing initialisation orders
  // cannot make an honest solution fail.
  void take_state(Side& solution, const std::vector<at::Tensor>& state) {
    const CallOutcome o = solution.client().call(model_call(ModelAction::State, 0, state), 1, policy_.run_call_time_s);
    const auto flag = o.kind == CallOutcome::Kind::Ok ? tensors_of(o.returns) : std::nullopt;
    const bool copied = flag && flag->size() == 1 && flag->at(0).numel() == 1 && flag->at(0).item<int64_t>() == 1;
    r_.build_notes.push_back(copied ? "ModelNew's parameters and buffers were set to Model's (" + std::to_string(state.size()) + " tensors)"
                                    : "ModelNew's state_dict does not line up with Model's: both were built under the same seed only");
  }

  void fail_to_load(const loader::LoadError& e) {
    if (e.message.find(protocol::kCppExtensionRefused) != std::string::npos) {
      r_.error =
          "kernelgate cannot judge this solution yet: it builds its kernels with torch.utils.cpp_extension (load_inline), "
          "which kernelgate does not build for KernelBench solutions yet (docs/kernelbench.md, \"Not yet\"):\n" +
          e.message;
      return;
    }
    Failure f;
    f.sample = "ModelNew(*get_init_inputs())";
    f.label = "loading the solution";
    f.family = "normal";
    f.message = e.message;
    const bool syntax = e.message.rfind(protocol::kPythonDoesNotCompile, 0) == 0;
    f.category = e.kind == loader::LoadError::Kind::TimedOut ? Category::Timeout
                 : e.kind == loader::LoadError::Kind::Died   ? Category::Crash
                 : syntax                                    ? Category::CompileError
                                                             : Category::RuntimeError;
    if (e.kind == loader::LoadError::Kind::ProtocolViolation) harness::violation(r_, Rule::ProtocolViolation, e.message);
    r_.failures.push_back(std::move(f));
    r_.total = static_cast<int>(samples_.size());
  }

  Failure failure(const Sample& s, Category c, const std::string& message) const {
    Failure f;
    f.category = c;
    f.sample = describe_inputs(s.inputs);
    f.index = s.index;
    f.label = s.label;
    f.family = s.family;
    f.traits = s.traits;
    f.message = s.label + ": " + message;
    return f;
  }

  std::optional<std::vector<at::Tensor>> judge_sample(Side& solution, const Sample& s) {
    r_.total++;
    const CallOutcome out = solution.client().call(model_call(ModelAction::Forward, 0, s.inputs), 1, policy_.run_call_time_s);
    harness::record_runner_evidence(r_, out, pair_.name, false, s.label);
    if (out.kind != CallOutcome::Kind::Ok) {
      const Category c = out.kind == CallOutcome::Kind::Timeout ? Category::Timeout
                         : out.kind == CallOutcome::Kind::Died  ? Category::Crash
                                                                : Category::RuntimeError;
      if (out.kind == CallOutcome::Kind::ProtocolViolation) harness::violation(r_, Rule::ProtocolViolation, s.label + ": " + out.message);
      if (out.kind == CallOutcome::Kind::Died) harness::sandbox_violation(r_, out.record);
      r_.failures.push_back(failure(s, c, "ModelNew.forward: " + outcome_text(out)));
      return std::nullopt;
    }
    const auto got = tensors_of(out.returns);
    if (!got) {
      r_.failures.push_back(failure(s, Category::RuntimeError, "the solution's runner returned no list of tensors"));
      return std::nullopt;
    }
    bool wrong = false;
    if (got->size() != s.reference.size()) {
      r_.failures.push_back(failure(s, Category::ShapeMismatch,
                                    "ModelNew.forward returned " + std::to_string(got->size()) + " tensor(s), Model.forward " +
                                        std::to_string(s.reference.size())));
      wrong = true;
    }
    for (size_t j = 0; !wrong && j < got->size(); ++j) {
      const auto m = harness::compare_values(c10::IValue(s.reference[j]), c10::IValue((*got)[j]), policy_, kToleranceOf,
                                             "output " + std::to_string(j));
      if (!m) continue;
      Failure f = failure(s, m->category, m->where + ": " + m->detail);
      f.mismatch = *m;
      // Wrong elements that still hold the runner's allocation poison were never written.
      const double poisoned = harness::poison_fraction({c10::IValue((*got)[j])}, {c10::IValue(s.reference[j])});
      if (poisoned >= 0.5)
        harness::violation(r_, Rule::UnwrittenOutput,
                           s.label + ": " + std::to_string(static_cast<int>(poisoned * 100)) + "% of output " + std::to_string(j) +
                               "'s wrong elements still hold the runner's allocation poison (0x7fedbeef): never written");
      r_.failures.push_back(std::move(f));
      wrong = true;
    }
    const auto after =
        out.args_after.size() == 3 && out.args_after[2].isTensorList() ? out.args_after[2].toTensorVector() : std::vector<at::Tensor>{};
    for (size_t k = 0; k < after.size() && k < s.inputs.size(); ++k) {
      const auto m = harness::compare_exact(c10::IValue(s.inputs[k]), c10::IValue(after[k]), "input " + std::to_string(k));
      if (!m) continue;
      Failure f = failure(s, Category::InputMutated, "ModelNew.forward wrote its input " + std::to_string(k) + ": " + m->detail);
      harness::violation(r_, Rule::InputMutated, f.message);
      r_.failures.push_back(std::move(f));
      wrong = true;
      break;
    }
    if (!wrong) r_.passed++;
    return got;
  }

  // A wrong answer that is exactly the right answer the solution gave an earlier sample, where the
  // reference's answers differ: it replays a result instead of computing one. An output that does
  // not depend on the inputs at all (a constant) was never right, so it is only wrong.
  void replayed(const std::vector<std::optional<std::vector<at::Tensor>>>& outputs, const std::vector<bool>& right) {
    for (size_t b = 1; b < outputs.size(); ++b) {
      if (!outputs[b] || right[b]) continue;
      for (size_t a = 0; a < b; ++a) {
        if (!outputs[a] || !right[a] || outputs[a]->size() != outputs[b]->size() ||
            samples_[a].reference.size() != samples_[b].reference.size())
          continue;
        bool same = true, reference_same = true;
        for (size_t j = 0; j < outputs[b]->size(); ++j) {
          same &= !harness::compare_exact(c10::IValue((*outputs[a])[j]), c10::IValue((*outputs[b])[j]), "output");
          reference_same &= !harness::compare_exact(c10::IValue(samples_[a].reference[j]), c10::IValue(samples_[b].reference[j]), "output");
        }
        if (same && !reference_same) {
          harness::violation(r_, Rule::ReplayedOutput,
                             samples_[b].label + " returned exactly the right outputs of " + samples_[a].label +
                                 " although Model's outputs for the two differ: an earlier result replayed");
          return;
        }
      }
    }
  }

  // Both forwards timed the same way on draw 0, each in its own runner: warm-up calls, then timed
  // calls whose count fills the policy's minimum measured time, each after a cache flush.
  void time_forward(Side& problem, Side& solution, const Sample& s) {
    const CallOutcome probe = problem.client().call(model_call(ModelAction::Forward, 0, s.inputs), 1, policy_.run_call_time_s);
    const double one = std::max(1e-6, probe.supervisor_wall_s);
    loader::CallOptions o;
    o.warmup = policy_.timing_warmup;
    o.reps = std::clamp(static_cast<int>(std::ceil(policy_.timing_min_seconds / one)), policy_.timing_min_reps,
                        std::min(policy_.timing_max_reps, loader::kMaxCallReps));
    const double budget = policy_.run_call_time_s * 4;
    const CallOutcome eager = problem.client().call(model_call(ModelAction::Forward, 0, s.inputs), 1, budget, o);
    const CallOutcome cand = solution.client().call(model_call(ModelAction::Forward, 0, s.inputs), 1, budget, o);
    harness::record_runner_evidence(r_, cand, pair_.name, false, s.label + " (timed)");
    if (eager.kind != CallOutcome::Kind::Ok || cand.kind != CallOutcome::Kind::Ok || eager.times_s.empty() || cand.times_s.empty()) {
      r_.timing_skipped = "a timed call failed: " + (cand.kind != CallOutcome::Kind::Ok ? outcome_text(cand) : outcome_text(eager));
      return;
    }
    harness::Timing t;
    t.sample = describe_inputs(s.inputs);
    t.reps = o.reps;
    const auto median_iqr = [](std::vector<double> v, double* iqr) {
      std::sort(v.begin(), v.end());
      *iqr = v[v.size() * 3 / 4] - v[v.size() / 4];
      return v[v.size() / 2];
    };
    t.candidate_median_s = median_iqr(cand.times_s, &t.candidate_iqr_s);
    t.eager_median_s = median_iqr(eager.times_s, &t.eager_iqr_s);
    t.speedup = t.candidate_median_s > 0 ? t.eager_median_s / t.candidate_median_s : 0;
    r_.timings.push_back(t);
    r_.speedup = t.speedup;
  }

  const Pair& pair_;
  const harness::EvalOptions& options_;
  const policy::Policy& policy_;
  const uint64_t seed_;
  OpResult r_;
  std::vector<Sample> samples_;
};

}  // namespace

harness::Report evaluate(const std::vector<Pair>& pairs, const harness::EvalOptions& options, const policy::Policy& policy) {
  const auto t0 = Clock::now();
  harness::Report rep;
  rep.version = harness::version();
  rep.torch_version = TORCH_VERSION;
  rep.device = names::device_name(names::Device::Cpu);
  rep.suite = kSuite;
  rep.policy = policy.name;
  rep.submission = options.submission;
  rep.seed_given = options.seed_given;
  rep.seed = options.seed_given ? options.seed : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  if (options.device != names::Device::Cpu)
    throw std::runtime_error("KernelBench pairs are judged on the CPU for now (--device cpu): the python kind runs on the CPU only");
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (options.on_progress) {
      harness::EvalProgress p;
      p.ops_done = i;
      p.ops_total = pairs.size();
      p.op = pairs[i].name;
      p.phase = "samples";
      options.on_progress(p);
    }
    if (options.verbose) std::cerr << "kernelgate: judging " << pairs[i].name << "\n";
    // The pair's seed follows from its name, never from its place in a folder.
    uint64_t name_hash = 0xcbf29ce484222325ull;
    for (const unsigned char c : pairs[i].name) name_hash = (name_hash ^ c) * 0x100000001b3ull;
    rep.ops.push_back(PairJudge(pairs[i], options, policy, derived_seed(rep.seed, name_hash)).run());
    if (options.on_op_decided) options.on_op_decided(rep.ops.back());
  }
  rep.wall_s = seconds_since(t0);
  return rep;
}

}  // namespace kg::kernelbench

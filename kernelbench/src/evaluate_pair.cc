// A KernelBench pair judged: the problem's runner makes the inputs and the reference's outputs,
// the solution's runner (another process) the candidate's, and the supervisor compares them,
// reads what the runner saw around each call, and times both forwards the same way.
#include "kernelgate/kernelbench.h"

#include "kernelgate/context_tolerance.h"
#include "kernelgate/inline_extension.h"
#include "kernelgate/inline_inspection.h"
#include "kernelgate/loader.h"
#include "kernelgate/protocol.h"
#include "kernelgate/python_entry.h"
#include "kernelgate/rules.h"
#include "kernelgate/remove_tree.h"
#include "model_inputs.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
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
// Outputs that fail that tolerance by their values alone still pass when their error against
// Model in float64 is at most this many times Model's own (the policy's context_tolerance.factor
// when it sets one): an ill-conditioned sample, such as sums that cancel between values of 1e4,
// then does not fail an honest solution that adds in another order.
constexpr double kContextFactor = 8;

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
  // Its end's time is added to *end_s (phase_seconds' runner_end).
  Side(const harness::EvalOptions& options, const policy::Policy& policy, const std::string& staging_root, double* end_s)
      : device_(options.device == names::Device::Cuda ? loader::Device::Cuda : loader::Device::Cpu), end_s_(end_s) {
    loader::RunnerOptions ro = harness::runner_options(options, policy, "");
    ro.staging_root = staging_root;
    client_ = loader::RunnerClient::start(ro);
  }
  ~Side() {
    const auto t = Clock::now();
    if (client_) client_->finish();
    *end_s_ += seconds_since(t);
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
    req.device = device_;
    req.model = model;
    req.model_seed = seed;
    req.model_init = init;
    return client_->load(req, said);
  }
  // One call of the model op on this side's device (inputs are copied there; returns come back to the host).
  CallOutcome call(const std::vector<c10::IValue>& args, double timeout_s, loader::CallOptions o = {}) {
    o.device = device_;
    return client_->call(args, 1, timeout_s, o);
  }
  // Copies a built file into the box's staging folder under its own name (before load()).
  void stage(const std::string& file) { client_->stage(file); }

 private:
  loader::Device device_;
  double* end_s_;
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
    // Absolute: the staging folders are bound into the boxes by path.
    const fs::path staging = fs::absolute(fs::path(options_.out_dir)) / ".runners-kernelbench";
    std::error_code ec;
    fs::create_directories(staging, ec);
    try {
      judge(staging.string());
    } catch (const std::exception& e) {
      if (r_.error.empty()) r_.error = std::string("kernelgate could not judge this pair: ") + e.what();
    }
    loader::remove_tree(staging.string(), ec);
    for (const loader::BuildResult& b : uncached_) loader::remove_uncached(b);
    harness::decide_verdict(r_, policy_);
    r_.eval_s = seconds_since(t0);
    return std::move(r_);
  }

 private:
  void judge(const std::string& staging) {
    auto t = Clock::now();
    Side problem(options_, policy_, staging, &r_.runner_end_s);
    std::string init;
    if (auto e = problem.load(pair_.problem, loader::LoadRequest::Model::Problem, derived_seed(seed_, 100), "", &init)) {
      r_.error = "the problem's fault: " + pair_.problem + " cannot be loaded: " + e->message;
      return;
    }
    problem_ = &problem;
    r_.runner_start_s = seconds_since(t);
    t = Clock::now();
    if (!make_samples(problem)) return;
    const std::optional<std::vector<at::Tensor>> state = model_state(problem);
    r_.samples_s = seconds_since(t);
    if (!state) return;
    t = Clock::now();
    auto solution = std::make_unique<Side>(options_, policy_, staging, &r_.runner_end_s);
    r_.runner_start_s += seconds_since(t);
    if (!load_solution(*solution, init)) return;
    // load_inline's calls found no library: built now, then the solution runs again in a fresh
    // runner with them staged beside it.
    const std::optional<std::vector<loader::InlineExtension>> asked = extension_requests(*solution);
    if (!asked) return;
    if (!asked->empty()) {
      std::vector<std::string> built;
      t = Clock::now();
      const bool extensions_built = build_extensions(*asked, &built);
      r_.build_step_s = seconds_since(t);
      if (!extensions_built) return;
      solution.reset();
      t = Clock::now();
      solution = std::make_unique<Side>(options_, policy_, staging, &r_.runner_end_s);
      for (const std::string& file : built) solution->stage(file);
      r_.runner_start_s += seconds_since(t);
      if (!load_solution(*solution, init)) return;
      const auto again = extension_requests(*solution);
      if (!again) return;
      if (!again->empty()) {
        r_.error = "kernelgate could not judge this solution: run again with the libraries it asked for, it asked load_inline for " +
                   std::to_string(again->size()) + " other extension(s) (first: " + again->front().name +
                   "): its sources change from one run to the next";
        return;
      }
    }
    r_.ran = true;
    t = Clock::now();
    take_state(*solution, *state);
    std::vector<std::optional<std::vector<at::Tensor>>> outputs;
    std::vector<bool> right;
    for (const Sample& s : samples_) {
      const int passed = r_.passed;
      outputs.push_back(judge_sample(*solution, s));
      right.push_back(r_.passed > passed);
    }
    replayed(outputs, right);
    if (r_.failures.empty() && protocol::defines_autograd_function(pair_.solution)) judge_gradients(problem, *solution);
    r_.judging_s = seconds_since(t);
    if (options_.timing && r_.failures.empty() && r_.passed == r_.total && !samples_.empty()) {
      t = Clock::now();
      time_forward(problem, *solution, samples_[0]);
      r_.timing_s = seconds_since(t);
    } else if (!options_.timing) {
      r_.timing_skipped = "timing off (--no-timing)";
    }
  }

  // A solution that defines its own torch.autograd.Function is judged on its backward too: the
  // gradients of sum_k (output_k * w_k).sum(), w random, with respect to the floating inputs and
  // the parameters, on draw 0, against Model's (ModelAction::Backward in each side's runner).
  void judge_gradients(Side& problem, Side& solution) {
    Sample g = samples_[0];
    g.label = "gradients on " + g.label;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(derived_seed(seed_, 300));
    std::vector<at::Tensor> args = g.inputs;
    for (const at::Tensor& out : g.reference)
      if (out.is_floating_point())
        args.push_back(at::randn(out.sizes(), gen, at::TensorOptions().dtype(at::kDouble)).to(out.scalar_type()));
    const auto n_inputs = static_cast<uint64_t>(g.inputs.size());
    std::vector<at::Tensor> want;
    if (!problem_call(problem, model_call(ModelAction::Backward, n_inputs, args), "Model's gradients", &want)) return;
    r_.total++;
    // No runner evidence from this call: the loss, autograd's engine and the gradients' zeros are
    // kernelgate's own aten ops in the same call, which the dispatcher observer cannot tell from the
    // solution's. Fallback and the other runner rules judge the forward calls.
    const CallOutcome out = solution.call(model_call(ModelAction::Backward, n_inputs, args), policy_.run_call_time_s);
    const auto got = out.kind == CallOutcome::Kind::Ok ? tensors_of(out.returns) : std::nullopt;
    if (!got) {
      r_.failures.push_back(failure(g, Category::RuntimeError, "ModelNew's gradients: " + outcome_text(out)));
      return;
    }
    if (got->size() != want.size()) {
      r_.failures.push_back(failure(g, Category::ShapeMismatch,
                                    "ModelNew has " + std::to_string(got->size()) + " gradients (floating inputs and parameters), Model " +
                                        std::to_string(want.size())));
      return;
    }
    size_t floating_inputs = 0;
    for (const at::Tensor& t : g.inputs) floating_inputs += t.is_floating_point() ? 1 : 0;
    for (size_t j = 0; j < got->size(); ++j) {
      const std::string where = j < floating_inputs ? "gradient of floating input " + std::to_string(j)
                                                    : "gradient of parameter " + std::to_string(j - floating_inputs);
      if (auto m = harness::compare_values(c10::IValue(want[j]), c10::IValue((*got)[j]), policy_, kToleranceOf, where)) {
        Failure f = failure(g, m->category, m->where + ": " + m->detail);
        f.mismatch = *m;
        r_.failures.push_back(std::move(f));
        return;
      }
    }
    r_.passed++;
  }

  // The problem's own fault: a call of the reference that did not answer as it should.
  bool problem_call(Side& problem, const std::vector<c10::IValue>& args, const char* what, std::vector<at::Tensor>* out) {
    const CallOutcome o = problem.call(args, policy_.run_call_time_s);
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
    const CallOutcome o = solution.call(model_call(ModelAction::State, 0, state), policy_.run_call_time_s);
    const auto flag = o.kind == CallOutcome::Kind::Ok ? tensors_of(o.returns) : std::nullopt;
    const bool copied = flag && flag->size() == 1 && flag->at(0).numel() == 1 && flag->at(0).item<int64_t>() == 1;
    r_.build_notes.push_back(copied ? "ModelNew's parameters and buffers were set to Model's (" + std::to_string(state.size()) + " tensors)"
                                    : "ModelNew's state_dict does not line up with Model's: both were built under the same seed only");
  }

  bool load_solution(Side& solution, const std::string& init) {
    std::string ignored;
    if (auto e = solution.load(pair_.solution, loader::LoadRequest::Model::Solution, derived_seed(seed_, 100), init, &ignored)) {
      fail_to_load(*e);
      return false;
    }
    return true;
  }

  // The load_inline calls the solution's load could not satisfy, checked; nullopt (the error
  // recorded) when its runner does not say them properly.
  std::optional<std::vector<loader::InlineExtension>> extension_requests(Side& solution) {
    const CallOutcome o = solution.call(harness::extension_requests_call(), policy_.run_call_time_s);
    try {
      return harness::read_extension_requests(o);
    } catch (const std::exception& e) {
      if (o.kind == CallOutcome::Kind::ProtocolViolation) harness::violation(r_, Rule::ProtocolViolation, o.message);
      r_.error = std::string("kernelgate could not read the solution's load_inline calls: ") + e.what();
      return std::nullopt;
    }
  }

  // Each extension built in the compile sandbox and inspected (harness::build_inline_extensions);
  // false with the failure recorded when one does not build.
  bool build_extensions(const std::vector<loader::InlineExtension>& asked, std::vector<std::string>* built) {
    const loader::BuildOptions bo =
        harness::build_options(policy_, (fs::absolute(fs::path(options_.out_dir)) / ".builds-kernelbench").string(),
                               fs::path(pair_.solution).parent_path().string());
    std::vector<loader::BuildResult> results;
    const bool ok = harness::build_inline_extensions(r_, asked, bo, policy_, &results);
    for (const loader::BuildResult& b : results) {
      uncached_.push_back(b);
      built->push_back(b.artifact);
    }
    return ok;
  }

  void fail_to_load(const loader::LoadError& e) {
    if (const std::string limit = harness::python_load_limit(e.message); !limit.empty()) {
      r_.error = "kernelgate cannot judge this solution yet: " + limit + ":\n" + e.message;
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
    const CallOutcome out = solution.call(model_call(ModelAction::Forward, 0, s.inputs), policy_.run_call_time_s);
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
    std::vector<std::optional<harness::Mismatch>> mismatches;
    if (got->size() != s.reference.size()) {
      r_.failures.push_back(failure(s, Category::ShapeMismatch,
                                    "ModelNew.forward returned " + std::to_string(got->size()) + " tensor(s), Model.forward " +
                                        std::to_string(s.reference.size())));
      wrong = true;
    } else {
      for (size_t j = 0; j < got->size(); ++j)
        mismatches.push_back(harness::compare_values(c10::IValue(s.reference[j]), c10::IValue((*got)[j]), policy_, kToleranceOf,
                                                     "output " + std::to_string(j)));
    }
    const bool in_context = passes_in_context(s, *got, mismatches);
    for (size_t j = 0; !wrong && j < mismatches.size(); ++j) {
      const auto& m = mismatches[j];
      if (!m || (in_context && value_category(m->category))) continue;
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

  static bool value_category(Category c) { return c == Category::ValueMismatch || c == Category::NanMask || c == Category::InfMask; }

  // The context-aware tolerance (docs/kernelbench.md): when the outputs fail atol/rtol by their
  // values alone, they still pass if their largest error against Model run in float64 is within
  // the factor of Model's own error on these inputs. Needs the problem's float64 forward; a model
  // that cannot run in float64 keeps atol/rtol.
  // `mismatches`: each output's against the reference at atol/rtol (empty when the counts differ).
  bool passes_in_context(const Sample& s, const std::vector<at::Tensor>& got,
                         const std::vector<std::optional<harness::Mismatch>>& mismatches) {
    bool value_only = false;
    for (const auto& m : mismatches) {
      if (!m) continue;
      if (!value_category(m->category)) return false;
      value_only = true;
    }
    if (!value_only || !problem_) return false;
    const CallOutcome o = problem_->call(model_call(ModelAction::Forward64, 0, s.inputs), policy_.run_call_time_s);
    const auto exact_tensors = o.kind == CallOutcome::Kind::Ok ? tensors_of(o.returns) : std::nullopt;
    if (!exact_tensors) return false;
    std::vector<c10::IValue> eager, cand, exact;
    for (const at::Tensor& t : s.reference) eager.emplace_back(t);
    for (const at::Tensor& t : got) cand.emplace_back(t);
    for (const at::Tensor& t : *exact_tensors) exact.emplace_back(t);
    const double factor = policy_.context_factor > 0 ? policy_.context_factor : kContextFactor;
    const auto c = harness::judge_outputs_in_context(eager, cand, exact, factor, policy_.context_floor);
    if (!c || !c->passes) return false;
    r_.build_notes.push_back(s.label + ": passed by the context tolerance (largest error against Model in float64 " +
                             std::to_string(c->candidate_error) + ", Model's own " + std::to_string(c->eager_error) + ", allowed " +
                             std::to_string(c->allowed) + "), not by atol/rtol");
    return true;
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
    const CallOutcome probe = problem.call(model_call(ModelAction::Forward, 0, s.inputs), policy_.run_call_time_s);
    const double one = std::max(1e-6, probe.supervisor_wall_s);
    loader::CallOptions o;
    o.warmup = policy_.timing_warmup;
    o.reps = std::clamp(static_cast<int>(std::ceil(policy_.timing_min_seconds / one)), policy_.timing_min_reps,
                        std::min(policy_.timing_max_reps, loader::kMaxCallReps));
    const double budget = policy_.run_call_time_s * 4;
    const CallOutcome eager = problem.call(model_call(ModelAction::Forward, 0, s.inputs), budget, o);
    const CallOutcome cand = solution.call(model_call(ModelAction::Forward, 0, s.inputs), budget, o);
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
  std::vector<loader::BuildResult> uncached_;
  Side* problem_ = nullptr;  // for the float64 truth  // builds over the cache's size limit, removed once judged
};

}  // namespace

harness::Report evaluate(const std::vector<Pair>& pairs, const harness::EvalOptions& options, const policy::Policy& policy) {
  const auto t0 = Clock::now();
  harness::Report rep;
  rep.version = harness::version();
  rep.torch_version = TORCH_VERSION;
  rep.device = names::device_name(options.device);
  if (options.device == names::Device::Cuda && !at::hasCUDA())
    throw std::runtime_error("--device cuda: the linked libtorch has no CUDA, or no GPU is visible");
  rep.suite = kSuite;
  rep.policy = policy.name;
  rep.submission = options.submission;
  rep.seed_given = options.seed_given;
  rep.seed = options.seed_given ? options.seed : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
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

// grad-check's supervisor side: eager autograd's gradients computed here (trusted), the
// submission's in a sandboxed runner with its ops installed over aten (protocol::kLoadGradient),
// each sample called there twice.
#include "kernelgate/grad_check.h"

#include "installs.h"
#include "ops_json.h"
#include "kernelgate/harness.h"
#include "kernelgate/loader.h"
#include "kernelgate/remove_tree.h"
#include "kernelgate/trace.h"
#include "kernelgate/weighted_grad.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <random>

namespace fs = std::filesystem;

namespace kg::train {
namespace {

using Clock = std::chrono::steady_clock;

bool mutates(const c10::FunctionSchema& schema) {
  for (const c10::Argument& a : schema.arguments())
    if (a.alias_info() && a.alias_info()->isWrite()) return true;
  return false;
}

std::vector<c10::IValue> clone_inputs(const std::vector<c10::IValue>& in) {
  std::vector<c10::IValue> out;
  for (const c10::IValue& v : in) out.push_back(v.isTensor() && v.toTensor().defined() ? c10::IValue(v.toTensor().clone()) : v);
  return out;
}

std::vector<c10::IValue> on_device(std::vector<c10::IValue> in, names::Device device) {
  if (device != names::Device::Cuda) return in;
  for (c10::IValue& v : in)
    if (v.isTensor() && v.toTensor().defined()) v = v.toTensor().to(at::kCUDA);
  return in;
}

// The inputs with every floating tensor as float64 (a copy): the same problem, computed exactly.
std::vector<c10::IValue> as_f64(const std::vector<c10::IValue>& in) {
  std::vector<c10::IValue> out;
  for (const c10::IValue& v : in) {
    const bool floating = v.isTensor() && v.toTensor().defined() && at::isFloatingType(v.toTensor().scalar_type());
    out.push_back(floating ? c10::IValue(v.toTensor().to(at::kDouble)) : v);
  }
  return out;
}

// eager autograd's gradients of the same weighted sum in float64, each rounded to its low-precision
// gradient's dtype; nothing when eager cannot differentiate the op in float64.
std::optional<std::vector<at::Tensor>> exact_gradients(const c10::OperatorHandle& aten, const std::vector<c10::IValue>& inputs,
                                                       const std::vector<at::Tensor>& weights, const std::vector<at::Tensor>& eager,
                                                       names::Device device) {
  try {
    std::vector<at::Tensor> w64;
    for (const at::Tensor& w : weights) w64.push_back(device == names::Device::Cuda ? w.to(at::kDouble).to(at::kCUDA) : w.to(at::kDouble));
    std::vector<at::Tensor> out;
    for (const at::Tensor& g : protocol::weighted_sum_gradients(aten, on_device(as_f64(inputs), device), w64)) out.push_back(g.cpu());
    if (out.size() != eager.size()) return std::nullopt;
    for (size_t i = 0; i < out.size(); ++i) out[i] = out[i].to(eager[i].scalar_type());
    return out;
  } catch (const std::exception&) { return std::nullopt; }
}

// The largest |a - b| over two runs' gradients, or -1 when some shape differs.
double spread(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return -1;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].sizes() != b[i].sizes()) return -1;
    if (a[i].numel() == 0) continue;
    const at::Tensor d = (a[i].to(at::kDouble) - b[i].to(at::kDouble)).abs();
    const at::Tensor finite = d.masked_select(d.isfinite());
    if (finite.numel()) m = std::max(m, finite.max().item<double>());
    if (!at::equal(a[i].isnan(), b[i].isnan())) m = std::max(m, std::numeric_limits<double>::infinity());
  }
  return m;
}

c10::IValue tensor_list(const std::vector<at::Tensor>& ts) {
  c10::List<at::Tensor> l;
  for (const at::Tensor& t : ts) l.push_back(t);
  return c10::IValue(std::move(l));
}

class Checker {
 public:
  Checker(const GradOptions& o, const policy::Policy& policy, std::vector<Installable>& ops, std::string staging)
      : o_(o),
        policy_(policy),
        ops_(ops),
        staging_(std::move(staging)),
        device_(o.device == names::Device::Cuda ? loader::Device::Cuda : loader::Device::Cpu) {}
  ~Checker() {
    if (client_) client_->finish();
  }

  void check(GradTarget& t) {
    const c10::FunctionSchema* schema = nullptr;
    try {
      schema = &loader::aten_schema(t.op);
    } catch (const std::exception& e) {
      t.not_checked = e.what();
      return;
    }
    if (mutates(*schema)) {
      t.error = "an in-place or out= overload: its gradient is its functional overload's";
      return;
    }
    const std::string suite = harness::suite_for_op(o_.suite, t.op);
    if (suite.empty()) {
      t.not_checked = "no suite has samples for " + t.op;
      return;
    }
    std::vector<harness::Sample> samples;
    try {
      samples = harness::suite_samples(suite, t.op);
    } catch (const std::exception& e) {
      t.error = e.what();
      return;
    }
    const c10::OperatorHandle aten =
        c10::Dispatcher::singleton().findSchemaOrThrow(schema->name().c_str(), schema->overload_name().c_str());
    if (!runner_for(t)) return;
    for (size_t i = 0; i < samples.size(); ++i) {
      GradSample g{trace::format_call(samples[i].call), "", ""};
      sample(t, *schema, aten, samples[i], i, g);
      if (g.status == "pass") ++t.passed;
      else if (g.status == "fail") ++t.failed;
      else if (g.status == "nondeterministic") ++t.nondeterministic;
      else ++t.skipped;
      t.samples.push_back(std::move(g));
      if (!client_ || !client_->alive()) {
        client_.reset();
        if (!runner_for(t)) return;
      }
    }
  }

 private:
  // A runner with every op installed and the target loaded for gradients.
  bool runner_for(GradTarget& t) {
    if (!client_) {
      client_ = start_runner(o_.device, o_.runner_path, policy_, staging_, 0, &t.error);
      if (!client_) return false;
      if (std::string err = install_ops(*client_, ops_, device_); !err.empty()) {
        t.error = err;
        client_.reset();
        return false;
      }
    }
    loader::LoadRequest req;
    req.aten_op = t.op;
    req.device = device_;
    req.gradient = true;
    if (auto e = client_->load(req)) {
      t.error = "cannot load " + t.op + " for gradients: " + e->message;
      client_.reset();
      return false;
    }
    return true;
  }

  void sample(const GradTarget& t, const c10::FunctionSchema& schema, const c10::OperatorHandle& aten, const harness::Sample& s,
              size_t index, GradSample& g) {
    std::mt19937_64 rng(o_.seed * 1000003 + index);
    std::vector<c10::IValue> inputs;
    std::vector<at::Tensor> weights, eager;
    try {
      inputs = harness::make_inputs(schema, s, rng);
      if (protocol::differentiable_arguments(inputs).empty()) {
        g.status = "skipped";
        g.detail = "no floating tensor argument";
        return;
      }
      std::vector<c10::IValue> forward = on_device(clone_inputs(inputs), o_.device);
      const std::vector<c10::IValue> outs = harness::call_reference(schema, forward);
      const std::vector<at::Tensor> diff = protocol::differentiable_returns(outs);
      if (diff.empty()) {
        g.status = "skipped";
        g.detail = "no floating return";
        return;
      }
      auto gen = at::make_generator<at::CPUGeneratorImpl>(rng());
      for (const at::Tensor& out : diff)
        weights.push_back(at::randn(out.sizes(), gen, at::TensorOptions().dtype(at::kDouble)).to(out.scalar_type()));
      std::vector<at::Tensor> w_dev;
      for (const at::Tensor& w : weights) w_dev.push_back(o_.device == names::Device::Cuda ? w.to(at::kCUDA) : w);
      for (at::Tensor& e : protocol::weighted_sum_gradients(aten, on_device(clone_inputs(inputs), o_.device), w_dev))
        eager.push_back(e.cpu());
    } catch (const std::exception& e) {
      g.status = "skipped";
      g.detail = std::string("eager autograd cannot differentiate it: ") + e.what();
      const size_t nl = g.detail.find('\n');
      if (nl != std::string::npos) g.detail.resize(nl);
      return;
    }
    std::vector<c10::IValue> args = inputs;
    args.push_back(tensor_list(weights));
    loader::CallOptions co;
    co.device = device_;
    std::vector<std::vector<at::Tensor>> runs;
    for (int k = 0; k < 2; ++k) {
      const loader::CallOutcome out = client_->call(args, 1, policy_.run_call_time_s, co);
      if (out.kind != loader::CallOutcome::Kind::Ok) {
        g.status = "fail";
        g.detail =
            "the gradient call failed: " + (out.message.empty() ? std::string(sandbox::status_name(out.record.status)) : out.message);
        // c10's errors carry a backtrace after their first line
        if (const size_t bt = g.detail.find("\nException raised from"); bt != std::string::npos) g.detail.resize(bt);
        return;
      }
      if (out.returns.size() != 1 || !out.returns[0].isTensorList()) {
        g.status = "fail";
        g.detail = "the runner returned something other than a list of gradients";
        return;
      }
      runs.push_back(out.returns[0].toTensorVector());
    }
    // Bit for bit, as an argument the op must leave unchanged is compared (NaN == NaN, -0.0 != 0.0).
    if (harness::compare_exact(tensor_list(runs[0]), tensor_list(runs[1]), "the gradients")) {
      g.status = "nondeterministic";
      char amount[32];
      std::snprintf(amount, sizeof amount, "%.3g", spread(runs[0], runs[1]));
      g.detail = std::string("two identical calls' gradients differ by up to ") + amount +
                 " (atomics or another order of accumulation): reported, not judged as wrong values";
      return;
    }
    if (runs[0].size() != eager.size()) {
      g.status = "fail";
      g.detail = std::to_string(runs[0].size()) + " gradients, eager has " + std::to_string(eager.size());
      return;
    }
    // Where eager's own gradient is off (bf16 arithmetic near a cancellation: gelu's derivative
    // near x = -0.75 on the CPU was 40% off), a kernel that matches the float64 gradient rounded
    // to the dtype is right, as the forward judging accepts the exact answer (docs/training.md).
    const std::vector<size_t> which = protocol::differentiable_arguments(inputs);
    std::optional<std::vector<at::Tensor>> exact;
    bool eager_off = false;
    for (size_t i = 0; i < eager.size(); ++i) {
      const std::string where = "gradient of argument '" + schema.arguments()[which[i]].name() + "'";
      auto m = harness::compare_values(c10::IValue(eager[i]), c10::IValue(runs[0][i]), policy_, t.op, where);
      if (!m) continue;
      if (!exact) exact = exact_gradients(aten, clone_inputs(inputs), weights, eager, o_.device);
      if (exact && !harness::compare_values(c10::IValue((*exact)[i]), c10::IValue(runs[0][i]), policy_, t.op, where)) {
        eager_off = true;
        continue;
      }
      g.status = "fail";
      g.detail = m->detail;
      return;
    }
    g.status = "pass";
    if (eager_off) g.detail = "eager's gradient is off here in this dtype; the kernel's matches the float64 gradient rounded to it";
  }

  const GradOptions& o_;
  const policy::Policy& policy_;
  std::vector<Installable>& ops_;
  std::string staging_;
  loader::Device device_;
  std::unique_ptr<loader::RunnerClient> client_;
};

// The forward overloads to differentiate, each with the submission's ops that make it one.
std::vector<GradTarget> targets_of(const std::vector<Installable>& ops) {
  std::map<std::string, std::vector<std::string>> t;
  for (const Installable& i : ops) {
    const std::vector<std::string> fwd = forward_ops_of(i.folder.op);
    if (!fwd.empty()) {
      for (const std::string& f : fwd) t[f].push_back(i.folder.op);
      continue;
    }
    try {
      if (!mutates(loader::aten_schema(i.folder.op))) t[i.folder.op].push_back(i.folder.op);
    } catch (const std::exception&) {}
  }
  std::vector<GradTarget> out;
  for (auto& [op, because] : t) {
    GradTarget g;
    g.op = op;
    g.because = because;
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

GradReport grad_check(const GradOptions& o, const policy::Policy& policy) {
  const auto t0 = Clock::now();
  if (o.submission.empty() || !fs::is_directory(o.submission)) throw std::runtime_error("no submission directory " + o.submission);
  GradReport r;
  r.device = names::device_name(o.device);
  r.suite = o.suite;
  r.seed = o.seed;
  const fs::path out = fs::absolute(o.out_dir);
  fs::create_directories(out);
  const fs::path staging = out / ".runners-grad", work = out / ".grad-build";
  fs::create_directories(staging);
  fs::create_directories(work);
  std::vector<Installable> ops;
  try {
    ops = build_ops(o.submission, o.device, policy, work.string(), &r.ops);
    r.targets = targets_of(ops);
    if (ops.empty()) {
      r.submission_fault = true;
      r.error = "no op of the submission could be installed (" + std::to_string(r.ops.size()) + " found)";
    } else if (r.targets.empty()) {
      r.submission_fault = true;
      r.error = "no op of the submission has a gradient to check (in-place and out= overloads only)";
    } else {
      Checker checker(o, policy, ops, staging.string());
      for (GradTarget& t : r.targets) checker.check(t);
    }
  } catch (const std::exception& e) { r.error = std::string("kernelgate could not run grad-check: ") + e.what(); }
  std::error_code ec;
  loader::remove_tree(staging.string(), ec);
  loader::remove_tree(work.string(), ec);
  for (const Installable& op : ops) loader::remove_uncached(op.built);
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

std::string grad_json(const GradReport& r) {
  using nlohmann::json;
  json j;
  j["kind"] = "kernelgate grad-check";
  j["device"] = r.device;
  j["suite"] = r.suite;
  j["seed"] = r.seed;
  j["error"] = r.error.empty() ? json(nullptr) : json(r.error);
  j["submission_fault"] = r.submission_fault;
  j["ops"] = installed_ops_json(r.ops);
  json targets = json::array();
  for (const GradTarget& t : r.targets) {
    json samples = json::array();
    for (const GradSample& s : t.samples) samples.push_back({{"sample", s.sample}, {"status", s.status}, {"detail", s.detail}});
    targets.push_back({{"op", t.op},
                       {"because", t.because},
                       {"passed", t.passed},
                       {"failed", t.failed},
                       {"nondeterministic", t.nondeterministic},
                       {"skipped", t.skipped},
                       {"error", t.error.empty() ? json(nullptr) : json(t.error)},
                       {"not_checked", t.not_checked.empty() ? json(nullptr) : json(t.not_checked)},
                       {"samples", samples}});
  }
  j["targets"] = targets;
  j["exit_status"] = grad_exit_code(r);
  j["wall_seconds"] = r.wall_s;
  return j.dump(2) + "\n";
}

int grad_exit_code(const GradReport& r) {
  if (!r.error.empty()) return r.submission_fault ? 1 : 2;
  int checked = 0;
  for (const GradTarget& t : r.targets) {
    if (!t.error.empty() || t.failed > 0) return 1;
    checked += t.passed + t.nondeterministic;
  }
  return checked > 0 ? 0 : 2;
}

}  // namespace kg::train

// The service's evaluations on the engine: one device lock, one build-slot pool, one eager runner
// per policy and one runner pool (for the default policy) kept across tasks, as a batch keeps
// them across submissions.
#include "evaluator.h"

#include "reward.h"

#include "kernelgate/harness.h"
#include "kernelgate/kernelbench.h"
#include "kernelgate/remove_tree.h"
#include "kernelgate/runner_pool.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>

namespace kg::serve {
namespace {
namespace fs = std::filesystem;

bool known_suite(const std::string& name) {
  const std::vector<std::string> suites = harness::suite_names();
  return std::find(suites.begin(), suites.end(), name) != suites.end();
}

class EngineEvaluator : public Evaluator {
 public:
  explicit EngineEvaluator(const ServeOptions& o) : options_(o), slots_(std::make_shared<harness::BuildSlots>(o.jobs)) {
    if (o.device == "cpu") device_ = names::Device::Cpu;
    else if (o.device == "cuda") device_ = names::Device::Cuda;
    else if (o.device == "auto") device_ = harness::auto_device();
    else throw std::runtime_error("--device " + o.device + ": expected cpu, cuda or auto");
    policy_of(o.policy);  // a bad default policy stops the service at start
    if (!known_suite(o.suite)) throw std::runtime_error("--suite " + o.suite + ": unknown suite");
    if (o.runner_pool) {
      harness::EvalOptions eo = base_options();
      const std::string staging = (fs::path(o.state_dir) / "runners").string();
      std::error_code ec;
      loader::remove_tree(staging, ec);
      // On a GPU with timing too: a task that finds a runner ready skips its start and its CUDA
      // set-up (the latency of one task on an idle service), and at full load the pool measured
      // no slower than runners started when needed (docs/serve.md, "Benchmark").
      pool_ = harness::make_runner_pool(eo, policy_of(o.policy), staging, static_cast<size_t>(std::min(4, std::max(1, o.workers))));
    }
  }

  void check(const TaskRequest& r) override {
    if (!r.policy.empty()) {
      try {
        policy_of(r.policy);
      } catch (const std::exception& e) { throw RequestError(400, "policy", e.what()); }
    }
    if (!r.suite.empty() && !known_suite(r.suite))
      throw RequestError(400, "suite", "\"" + r.suite + "\" is not a suite (kernelgate ops lists them)");
  }

  EvalOutcome evaluate(const EvalTask& task) override {
    const std::string policy_name = task.request.policy.empty() ? options_.policy : task.request.policy;
    const policy::Policy& policy = policy_of(policy_name);
    harness::EvalOptions eo = base_options();
    eo.submission = task.submission_dir;
    eo.out_dir = task.out_dir;
    eo.suite = task.request.suite.empty() ? options_.suite : task.request.suite;
    eo.ops = task.request.ops;
    eo.timing = policy.timing && task.request.timing.value_or(true);
    eo.eager_runner = eager_of(policy_name);
    if (policy_name == options_.policy) eo.runner_pool = pool_;
    eo.stop_reason = task.stop_reason;
    EvalOutcome out;
    harness::Report report;
    try {
      if (!task.request.kernelbench.empty()) {
        // A KernelBench pair, judged on the CPU whatever the service's device: the device lock and pools are the ops'.
        const fs::path dir = task.submission_dir;
        eo.device = names::Device::Cpu;
        eo.suite = kg::kernelbench::kSuite;
        eo.runner_pool.reset();
        report = kernelbench::evaluate({kernelbench::Pair{task.request.kernelbench, (dir / "problem.py").string(),
                                                          (dir / "solution.py").string()}},
                                       eo, policy);
      } else {
        report = harness::evaluate(eo, policy);
      }
    } catch (const std::exception& e) {
      out.error = e.what();
      return out;
    }
    json doc = json::parse(harness::report_json(report));
    json result;
    result["ops"] = doc["ops"];
    if (doc.contains("summary")) result["summary"] = doc["summary"];
    result["problems"] = doc.value("problems", json::array());
    result["feedback"] = harness::report_feedback(report);
    result["reward"] = reward_of(doc["ops"], policy);
    result["policy"] = policy.name;
    result["suite"] = eo.suite;
    result["device"] = doc.value("device", "");
    result["seed"] = doc.value("seed", json());
    out.verdict = result["reward"]["verdict"].get<std::string>();
    out.rules = result["reward"]["rules"].get<std::vector<std::string>>();
    out.result = std::move(result);
    out.ok = true;
    return out;
  }

  json devices() override {
    json d = {{"device", names::device_name(device_)}};
    if (pool_) {
      const auto s = pool_->stats();
      d["pool_size"] = s.ready_now;
      d["pool_taken_ready"] = s.taken_ready;
      d["pool_taken_cold"] = s.taken_cold;
    } else {
      d["pool_size"] = 0;
    }
    return json::array({d});
  }

  void shutdown() override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [name, eager] : eagers_) harness::finish_eager_runner(*eager);
    eagers_.clear();
    pool_.reset();
  }

 private:
  harness::EvalOptions base_options() {
    harness::EvalOptions eo;
    eo.device = device_;
    eo.jobs = std::max(1, options_.jobs);
    eo.build_slots = slots_;
    eo.device_lock = &lock_;
    eo.suite = options_.suite;
    return eo;
  }

  const policy::Policy& policy_of(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = policies_.find(name);
    if (it == policies_.end()) it = policies_.emplace(name, policy::load(name)).first;
    return it->second;
  }

  std::shared_ptr<harness::EagerRunner> eager_of(const std::string& policy) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& e = eagers_[policy];
    if (!e) e = harness::make_eager_runner();
    return e;
  }

  ServeOptions options_;
  names::Device device_ = names::Device::Cpu;
  std::shared_ptr<harness::BuildSlots> slots_;
  harness::DeviceLock lock_;
  std::shared_ptr<loader::RunnerPool> pool_;
  std::mutex mutex_;
  std::map<std::string, policy::Policy> policies_;  // node-based: references stay valid
  std::map<std::string, std::shared_ptr<harness::EagerRunner>> eagers_;
};

}  // namespace

std::unique_ptr<Evaluator> make_evaluator(const ServeOptions& options) { return std::make_unique<EngineEvaluator>(options); }

}  // namespace kg::serve

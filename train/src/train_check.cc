// train-check's supervisor side: builds the submission's ops as an evaluation would (same compile
// sandbox, same cache), then runs the model in two fresh sandboxed runners — eager, and with the
// ops installed over aten (protocol::kLoadInstallOverAten) — and compares their losses.
#include "kernelgate/train_check.h"

#include "installs.h"

#include "kernelgate/harness.h"
#include "kernelgate/loader.h"
#include "kernelgate/protocol.h"
#include "kernelgate/remove_tree.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kg::train {
namespace {

using Clock = std::chrono::steady_clock;

struct Setup {
  const TrainOptions& options;
  const policy::Policy& policy;
  int steps;
  std::string staging;     // the runners' staging root (absolute)
  std::string model_path;  // the model file, as staged from
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the model file " + path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<double> doubles(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kDouble).contiguous().cpu();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

// One training run in a fresh runner: the model loaded, `ops` installed over aten, then trained.
TrainRun run_model(const Setup& s, const std::vector<Installable>& ops, bool* model_fault) {
  TrainRun run;
  const double call_s = 60 + s.steps * std::max(10.0, s.policy.run_call_time_s);
  const loader::Device device = s.options.device == names::Device::Cuda ? loader::Device::Cuda : loader::Device::Cpu;
  std::unique_ptr<loader::RunnerClient> client =
      start_runner(s.options.device, s.options.runner_path, s.policy, s.staging, call_s + 60, &run.error);
  if (!client) return run;
  struct Finish {
    std::unique_ptr<loader::RunnerClient>& c;
    ~Finish() {
      if (c) c->finish();
    }
  } finish{client};
  loader::LoadRequest model;
  model.artifact = client->stage(s.model_path);
  model.registered_op = "kgref::model";
  model.kind = loader::Kind::Python;
  model.device = device;
  model.model = loader::LoadRequest::Model::Problem;
  model.model_seed = s.options.seed;
  std::string said;
  if (auto e = client->load(model, &said)) {
    *model_fault = true;
    run.error = "the model does not load: " + e->message;
    return run;
  }
  if (std::string err = install_ops(*client, ops, device); !err.empty()) {
    run.error = err;
    return run;
  }
  c10::List<at::Tensor> inputs;
  inputs.push_back(at::full({1}, s.steps, at::kLong));
  const std::vector<c10::IValue> args = {c10::IValue(static_cast<int64_t>(protocol::ModelAction::Train)),
                                         c10::IValue(static_cast<int64_t>(s.options.seed)), c10::IValue(std::move(inputs))};
  loader::CallOptions co;
  co.device = device;
  const loader::CallOutcome out = client->call(args, 1, call_s, co);
  if (out.kind != loader::CallOutcome::Kind::Ok) {
    run.error = "training failed: " + (out.message.empty() ? std::string(sandbox::status_name(out.record.status)) : out.message);
    return run;
  }
  if (out.returns.size() != 1 || !out.returns[0].isTensorList() || out.returns[0].toTensorVector().size() != 3) {
    run.error = "the runner's training returned something other than [losses, seconds, parameters]";
    return run;
  }
  const std::vector<at::Tensor> r = out.returns[0].toTensorVector();
  run.losses = doubles(r[0]);
  run.step_s = doubles(r[1]);
  run.parameters = doubles(r[2]);
  if (run.losses.size() > static_cast<size_t>(s.steps) || run.step_s.size() != run.losses.size())
    run.error = "the runner's training returned " + std::to_string(run.losses.size()) + " losses for " + std::to_string(s.steps) + " steps";
  return run;
}

}  // namespace

TrainReport train_check(const TrainOptions& o, const policy::Policy& policy) {
  const auto t0 = Clock::now();
  if (o.submission.empty() || !fs::is_directory(o.submission)) throw std::runtime_error("no submission directory " + o.submission);
  TrainReport r;
  r.steps = o.steps > 0 ? o.steps : policy.train_steps;
  r.seed = o.seed;
  r.device = names::device_name(o.device);
  r.loss_atol = policy.train_loss_atol;
  r.loss_rtol = policy.train_loss_rtol;
  r.model = o.model_file.empty() ? "bundled GPT (4 layers, 4 heads, 128-wide, 64-token blocks)" : o.model_file;
  const std::string source = o.model_file.empty() ? bundled_model_source() : read_file(o.model_file);
  const fs::path out = fs::absolute(o.out_dir);
  fs::create_directories(out);
  const fs::path staging = out / ".runners-train";
  const fs::path work = out / ".train-build";
  fs::create_directories(staging);
  fs::create_directories(work);
  const fs::path model_dir = out / ".train-model";
  fs::create_directories(model_dir);
  const fs::path model_path = model_dir / (o.model_file.empty() ? "gpt.py" : fs::path(o.model_file).filename().string());
  {
    std::ofstream f(model_path, std::ios::binary);
    f << source;
    if (!f) throw std::runtime_error("cannot write " + model_path.string());
  }
  Setup s{o, policy, r.steps, staging.string(), model_path.string()};
  std::vector<Installable> ops;
  try {
    ops = build_ops(o.submission, o.device, policy, work.string(), &r.ops);
    if (ops.empty()) {
      r.submission_fault = true;
      r.error = "no op of the submission could be installed (" + std::to_string(r.ops.size()) + " found)";
    } else {
      bool model_fault = false;
      r.eager = run_model(s, {}, &model_fault);
      if (!r.eager.error.empty()) {
        r.problem_fault = true;
        r.error = "the model's fault: eager training (no submitted kernel) failed: " + r.eager.error;
      } else if (r.eager.losses.size() < static_cast<size_t>(r.steps)) {
        r.problem_fault = true;
        r.error = "the model's fault: eager training's loss is not finite at step " + std::to_string(r.eager.losses.size() - 1);
      } else {
        r.kernels = run_model(s, ops, &model_fault);
        r.drift = compare_runs(r.eager, r.kernels, r.steps, r.loss_atol, r.loss_rtol);
        if (!r.kernels.error.empty() && r.kernels.losses.empty()) {
          r.drift.first_outside = 0;
          r.drift.inside = false;
        }
      }
    }
  } catch (const std::exception& e) { r.error = std::string("kernelgate could not run train-check: ") + e.what(); }
  std::error_code ec;
  loader::remove_tree(staging.string(), ec);
  loader::remove_tree(work.string(), ec);
  loader::remove_tree(model_dir.string(), ec);
  for (const Installable& op : ops) loader::remove_uncached(op.built);
  r.verdict = !r.error.empty() ? "error" : r.drift.inside ? "inside" : "outside";
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

}  // namespace kg::train

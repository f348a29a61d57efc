// `kernelgate train-check SUBMISSION --out OUT [--steps N] [--model PROBLEM.py] [--seed N]
// [--policy P] [--device cpu|cuda|auto]`: kg::train (train/include/kernelgate/train_check.h).
#include "eval_cli.h"
#include "kernelgate/harness.h"
#include "kernelgate/names.h"
#include "kernelgate/policy.h"
#include "kernelgate/train_check.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace {

const char* kTrainUsage =
    "usage: kernelgate train-check SUBMISSION --out OUT [--steps N] [--model PROBLEM.py] [--seed N]\n"
    "                              [--policy NAME|FILE] [--device cpu|cuda|auto]\n"
    "\n"
    "Can you train with these kernels? Trains a model N steps from a fixed seed twice, each in a\n"
    "sandboxed runner: once on libtorch's own kernels, once with every op of SUBMISSION (cpu, cuda\n"
    "and python kinds) installed over aten's kernel for the device, so that the forward, autograd's\n"
    "backward formulas and the optimizer all run them. Compares the losses step by step against the\n"
    "policy's band ([train] loss_atol + loss_rtol * |eager's loss|).\n"
    "\n"
    "  --out OUT        writes OUT/train.json (per-step losses of both runs, first step outside the\n"
    "                   band, max drift, final-parameter distance, seconds per step both ways) and\n"
    "                   OUT/loss.svg (both loss curves and the band)\n"
    "  --steps N        training steps (default: the policy's train.steps, 32)\n"
    "  --model FILE     a problem file in KernelBench's layout (Model, get_inputs, get_init_inputs;\n"
    "                   optionally get_batch(step), loss(output, inputs), TRAIN_LR); default: the\n"
    "                   bundled GPT (nanoGPT's shape: 4 layers, 4 heads, 128-wide, 64-token blocks,\n"
    "                   on tokens kernelgate makes)\n"
    "  --seed N         the seed of both runs (default 1)\n"
    "  --policy P       policy profile name or TOML file (default competition)\n"
    "  --device D       cpu, cuda or auto (default auto)\n"
    "\n"
    "Example: kernelgate train-check my_kernels/ --out out/train --steps 32\n"
    "\n"
    "Exit status: 0 every step inside the band, 1 a step outside it (or none of the submission's\n"
    "ops builds), 2 bad usage, or the model's fault (it does not load, or its eager training is\n"
    "not finite), or kernelgate could not run.\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "kernelgate train-check: %s\n\n%s", msg.c_str(), kTrainUsage);
  return 2;
}

}  // namespace

int kg_cmd_train(int argc, char** argv) {
  kg::train::TrainOptions o;
  std::string policy_name = "competition", device = "auto";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kTrainUsage, stdout);
      return 0;
    }
    const bool takes_value = a == "--out" || a == "--steps" || a == "--model" || a == "--seed" || a == "--policy" || a == "--device";
    if (takes_value) {
      if (i + 1 >= argc) return usage_error(a + " needs a value");
      const std::string v = argv[++i];
      unsigned long long n = 0;
      if (a == "--out") o.out_dir = v;
      else if (a == "--model") o.model_file = v;
      else if (a == "--policy") policy_name = v;
      else if (a == "--device") device = v;
      else if (a == "--steps") {
        if (!kg::cli::parse_count(v, 100000, &n) || n == 0)
          return usage_error("--steps must be an integer from 1 to 100000, got '" + v + "'");
        o.steps = static_cast<int>(n);
      } else {
        if (!kg::cli::parse_count(v, (1ull << 62) - 1, &n))
          return usage_error("--seed must be a non-negative integer below 2^62, got '" + v + "'");
        o.seed = n;
      }
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option " + a);
    } else if (o.submission.empty()) {
      o.submission = a;
    } else {
      return usage_error("one submission directory, got a second: " + a);
    }
  }
  if (o.submission.empty()) return usage_error("no submission directory given");
  if (o.out_dir.empty()) return usage_error("--out is required (train.json and loss.svg go there)");
  if (const auto d = kg::cli::device_option(device)) o.device = *d;
  else return usage_error("--device must be cpu, cuda or auto, got '" + device + "'");
  if (o.device == kg::names::Device::Cuda && kg::harness::auto_device() != kg::names::Device::Cuda)
    return usage_error("--device cuda, but no CUDA device is usable here");
  kg::policy::Policy policy;
  try {
    policy = kg::policy::load(policy_name);
  } catch (const std::exception& e) { return usage_error(e.what()); }
  kg::train::TrainReport r;
  try {
    r = kg::train::train_check(o, policy);
    kg::train::write_train_outputs(r, o.out_dir);
  } catch (const std::exception& e) { return usage_error(e.what()); }
  for (const auto& op : r.ops) std::printf("  %-28s %-7s %s\n", op.op.c_str(), op.kind.c_str(), op.status.c_str());
  if (r.verdict == "error") {
    std::printf("train-check: error: %s\n", r.error.c_str());
    return r.submission_fault ? 1 : 2;
  }
  std::printf("train-check: %d steps on %s, seed %llu: eager loss %.6g -> %.6g, with the kernels %.6g -> %.6g\n", r.steps, r.device.c_str(),
              static_cast<unsigned long long>(r.seed), r.eager.losses.front(), r.eager.losses.back(),
              r.kernels.losses.empty() ? NAN : r.kernels.losses.front(), r.kernels.losses.empty() ? NAN : r.kernels.losses.back());
  std::printf("  max drift %.3g (step %d), final-parameter distance %.3g, seconds per step %.4g eager / %.4g with the kernels\n",
              r.drift.max_abs, r.drift.max_abs_step, r.drift.parameter_distance, r.eager.mean_step_s(), r.kernels.mean_step_s());
  if (!r.kernels.error.empty()) {
    // A traceback's last line says what happened; train.json has all of it.
    std::string last = r.kernels.error;
    while (!last.empty() && last.back() == '\n') last.pop_back();
    if (const size_t nl = last.rfind('\n'); nl != std::string::npos) last = last.substr(nl + 1);
    std::printf("  the run with the kernels stopped: %s\n", last.c_str());
  }
  if (r.verdict == "inside") {
    std::printf("train-check: INSIDE the band (%g + %g*|loss|) at every step; %s/train.json, %s/loss.svg\n", r.loss_atol, r.loss_rtol,
                o.out_dir.c_str(), o.out_dir.c_str());
    return 0;
  }
  std::printf("train-check: OUTSIDE the band (%g + %g*|loss|) from step %d; %s/train.json, %s/loss.svg\n", r.loss_atol, r.loss_rtol,
              r.drift.first_outside, o.out_dir.c_str(), o.out_dir.c_str());
  return 1;
}

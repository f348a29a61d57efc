// `kernelgate grad-check SUBMISSION --out OUT [--suite S] [--seed N] [--policy P] [--device D]`:
// kg::train's backward correctness (train/include/kernelgate/grad_check.h).
#include "eval_cli.h"
#include "kernelgate/grad_check.h"
#include "kernelgate/harness.h"
#include "kernelgate/names.h"
#include "kernelgate/policy.h"
#include "kernelgate/results.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

namespace {

const char* kGradUsage =
    "usage: kernelgate grad-check SUBMISSION --out OUT [--suite NAME|PATH] [--seed N] [--policy NAME|FILE]\n"
    "                             [--device cpu|cuda|auto]\n"
    "\n"
    "Backward correctness. Installs every op of SUBMISSION over aten in a sandboxed runner, then\n"
    "differentiates each forward overload it provides, and the forward overload whose autograd\n"
    "formula calls each backward overload it provides (threshold_backward -> relu, gelu_backward ->\n"
    "gelu, _softmax_backward_data -> _softmax, native_layer_norm_backward -> native_layer_norm, ...),\n"
    "on the suite's samples: the gradients of (out * w).sum(), w random, with respect to every\n"
    "floating argument, compared with eager autograd's at the policy's tolerances. Each sample is\n"
    "called twice: gradients that differ between identical calls (atomics) are reported as\n"
    "nondeterministic, not as wrong values.\n"
    "\n"
    "  --out OUT       writes OUT/grad.json: per forward overload checked, the submission's ops that\n"
    "                  made it one, passed/failed/nondeterministic/skipped counts and each sample's line\n"
    "  --suite S       the samples (default auto: as eval picks them)\n"
    "  --seed N        inputs and weights (default 1)\n"
    "  --policy P      policy profile name or TOML file (default competition)\n"
    "  --device D      cpu, cuda or auto (default auto)\n"
    "\n"
    "Example: kernelgate grad-check my_kernels/ --out out/grad\n"
    "\n"
    "Exit status: 0 every checked sample's gradients match (nondeterministic ones included), 1 a\n"
    "sample's do not, an op does not install, or none of the submission's ops builds, 2 bad usage,\n"
    "kernelgate could not run, or nothing could be checked (no suite has samples for any target).\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "kernelgate grad-check: %s\n\n%s", msg.c_str(), kGradUsage);
  return 2;
}

}  // namespace

int kg_cmd_grad(int argc, char** argv) {
  kg::train::GradOptions o;
  std::string policy_name = "competition", device = "auto";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kGradUsage, stdout);
      return 0;
    }
    if (a == "--out" || a == "--suite" || a == "--seed" || a == "--policy" || a == "--device") {
      if (i + 1 >= argc) return usage_error(a + " needs a value");
      const std::string v = argv[++i];
      if (a == "--out") o.out_dir = v;
      else if (a == "--suite") o.suite = v;
      else if (a == "--policy") policy_name = v;
      else if (a == "--device") device = v;
      else {
        unsigned long long n = 0;
        if (!kg::cli::parse_count(v, (1ull << 40) - 1, &n)) return usage_error("--seed must be a non-negative integer, got '" + v + "'");
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
  if (o.out_dir.empty()) return usage_error("--out is required (grad.json goes there)");
  if (const auto d = kg::cli::device_option(device)) o.device = *d;
  else return usage_error("--device must be cpu, cuda or auto, got '" + device + "'");
  if (o.suite != kg::harness::kAutoSuite && !kg::harness::suite_is_path(o.suite)) {
    const auto names = kg::harness::suite_names();
    if (std::find(names.begin(), names.end(), o.suite) == names.end()) return usage_error("unknown suite '" + o.suite + "'");
  }
  kg::policy::Policy policy;
  try {
    policy = kg::policy::load(policy_name);
  } catch (const std::exception& e) { return usage_error(e.what()); }
  kg::train::GradReport r;
  try {
    r = kg::train::grad_check(o, policy);
    kg::results::write_atomically((std::filesystem::path(o.out_dir) / "grad.json").string(), kg::train::grad_json(r));
  } catch (const std::exception& e) { return usage_error(e.what()); }
  for (const auto& op : r.ops) std::printf("  %-28s %-7s %s\n", op.op.c_str(), op.kind.c_str(), op.status.c_str());
  if (!r.error.empty()) std::printf("grad-check: error: %s\n", r.error.c_str());
  for (const auto& t : r.targets) {
    std::string because;
    for (const auto& b : t.because) because += (because.empty() ? "" : ", ") + b;
    std::printf("grad %-24s (for %s): %d passed, %d failed, %d nondeterministic, %d skipped%s%s\n", t.op.c_str(), because.c_str(), t.passed,
                t.failed, t.nondeterministic, t.skipped, t.error.empty() && t.not_checked.empty() ? "" : "; ",
                t.error.empty() ? ("not checked: " + t.not_checked).c_str() : t.error.c_str());
    int shown = 0;
    for (const auto& s : t.samples)
      if ((s.status == "fail" || s.status == "nondeterministic") && shown++ < 3)
        std::printf("  %s: %s\n    %s\n", s.status.c_str(), s.sample.c_str(), s.detail.substr(0, 400).c_str());
  }
  const int rc = kg::train::grad_exit_code(r);
  std::printf("grad-check: %s; %s/grad.json\n", rc == 0 ? "gradients match eager autograd" : "gradients do NOT all match",
              o.out_dir.c_str());
  return rc;
}

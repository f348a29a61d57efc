// warmup(): each kind's per-toolchain precompiled work, built into the cache root ahead of time.
#include "build_plan.h"
#include "kernelgate/loader.h"
#include "nvcc_pipeline.h"
#include "toolchain.h"
#include "util.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <optional>
#include <set>

namespace fs = std::filesystem;

namespace kg::loader {
namespace {

// The toolchain folders in the cache root (prelude-*, shim-*, nvcc-dryrun-*, cuda-prefix-*).
std::set<std::string> toolchain_entries() {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache_root(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.find(".tmp") != std::string::npos || name.find(".trash") != std::string::npos) continue;
    for (const char* prefix : {"prelude-", "shim-", "nvcc-dryrun-", "cuda-prefix-"})
      if (name.rfind(prefix, 0) == 0) out.insert(name);
  }
  return out;
}

// Runs `make` (which returns the entry's folder, "" when it could not be built) and records
// whether it built a new entry and how long that took.
WarmupStep step(const std::string& what, const std::function<std::string(std::string* rejected)>& make) {
  WarmupStep s;
  s.what = what;
  const std::set<std::string> before = toolchain_entries();
  const auto t0 = std::chrono::steady_clock::now();
  std::string rejected;
  try {
    s.entry = make(&rejected);
    if (s.entry.empty()) s.error = "could not be built (kernelgate's warning above says why); builds compile it whole";
  } catch (const std::exception& e) { s.error = e.what(); }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.built = !s.entry.empty() && !before.count(fs::path(s.entry).filename().string());
  if (!rejected.empty() && s.error.empty()) s.what += " (" + rejected + ")";
  return s;
}

std::string prefix_name(const std::vector<std::string>& headers) {
  if (headers.empty()) return "cuda host prefix (<torch/extension.h>, <cuda_runtime.h>)";
  std::string names;
  for (const auto& h : headers) names += (names.empty() ? "<" : ", <") + h + ">";
  return "cuda host prefix with " + names;
}

}  // namespace

std::vector<WarmupStep> warmup(Kind kind, const BuildOptions& options) {
  std::vector<WarmupStep> out;
  if (std::string why = kind_unavailable(kind); !why.empty()) {
    out.push_back({std::string(kind_name(kind)) + " kind", "", false, 0, why});
    return out;
  }
  // kg-nvrtc compiles each source alone, and a python source is not compiled: nothing to precompile
  if (kind == Kind::Nvrtc || kind == Kind::Python) return out;
  out.push_back(step("torch/extension.h shim", [](std::string*) { return toolchain::shim_dir(); }));
  // The prelude and each cuda prefix are independent g++/nvcc runs of tens of seconds: they are
  // built side by side (each under its own lock), and reported in this order.
  std::vector<std::future<WarmupStep>> pieces;
  // Both kinds' registration glue compiles against the prelude.
  pieces.push_back(std::async(std::launch::async, [&] {
    return step("precompiled prelude", [&](std::string* rejected) { return toolchain::prelude_dir(options, rejected); });
  }));
  auto collect = [&] {
    for (auto& p : pieces) out.push_back(p.get());
    pieces.clear();
  };
  if (kind != Kind::Cuda) {
    collect();
    return out;
  }
  const std::string arch = toolchain::cuda_arch(options);
  std::string dryrun;
  const WarmupStep dry = step("nvcc dry run", [&](std::string* rejected) {
    dryrun = toolchain::nvcc_dryrun(arch, options, rejected);
    return dryrun.empty() ? std::string() : toolchain::nvcc_dryrun_dir(arch);
  });
  std::string why;
  const std::optional<nvcc::Pipeline> pipe = dryrun.empty() ? std::nullopt : nvcc::parse_dryrun(dryrun, "$ATEN", &why);
  if (pipe)
    for (const auto& headers : cuda_prefix_variants())
      pieces.push_back(std::async(std::launch::async, [&pipe, &arch, &options, headers] {
        return step(prefix_name(headers), [&](std::string* rejected) {
          auto hp = toolchain::cuda_host_prefix(*pipe, cuda_prefix(headers), cuda_module_id(), arch, options, rejected);
          return hp ? hp->dir : std::string();
        });
      }));
  out.push_back(pieces.front().get());
  pieces.erase(pieces.begin());
  out.push_back(dry);
  collect();
  if (!dryrun.empty() && !pipe)
    out.push_back({"cuda host prefixes", "", false, 0, "nvcc's dry run has another shape (" + why + "): builds run nvcc whole"});
  return out;
}

}  // namespace kg::loader

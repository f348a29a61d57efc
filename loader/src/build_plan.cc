// Each kind's build plan (build_plan.h).
#include "build_plan.h"

#include "build_includes.h"
#include "glue.h"
#include "kg_build_config.h"
#include "shim.h"
#include "nvcc_pipeline.h"
#include "pp_splice.h"
#include "toolchain.h"
#include "util.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

namespace fs = std::filesystem;

namespace kg::loader {
namespace {

std::string sh_line(const std::vector<std::string>& argv) {
  std::string o;
  for (const auto& a : argv) o += (o.empty() ? "" : " ") + sh_quote(a);
  return o;
}

// Each chain's preprocess reads only the rest of the unit (kg_unit_rest.cu) when that chain's
// prefix is kept preprocessed (pp_splice.h), and the whole unit when the join is refused or the
// unit is built with all of ATen. Returns the script's kg_splice function ("" when no chain joins).
std::string splice_preprocess(nvcc::Pipeline& pipe, const toolchain::HostPrefix& hp, const std::string& prefix, const std::string& unit,
                              Plan& p) {
  const size_t prefix_lines = static_cast<size_t>(std::count(prefix.begin(), prefix.end(), '\n'));
  bool any = false;
  for (auto [chain, steps, kept] :
       {std::make_tuple(std::string("host"), &pipe.host, hp.host_pp), std::make_tuple(std::string("device"), &pipe.device, hp.device_pp)}) {
    if (!kept) continue;
    for (auto& step : *steps) {
      const std::string output = nvcc::output_of(step), rest = "kg_unit_rest." + chain + ".ii";
      const std::string rest_cmd = splice::rest_command(step, *kept, rest);  // "" for a step that is not a preprocess
      if (rest_cmd.empty() || output.empty()) continue;
      step = "{ [ -z \"$ATEN\" ] && " + rest_cmd + " 2>/dev/null && kg_splice " + rest + " " + sh_quote(kept->text) + " " +
             sh_quote(kept->once) + " " + sh_quote(output) + " && echo joined > pp-" + chain + ".txt; } || " + step;
      p.notes_if_file.push_back(
          {"pp-" + chain + ".txt", "prefix preprocessed once: the " + chain + " chain preprocessed only the submission's part"});
      any = true;
    }
  }
  if (!any) return "";
  p.generated.push_back({"kg_unit_rest.cu", splice::rest_unit(unit, prefix_lines, "kg_unit.cu")});
  return splice::shell_function(prefix_lines, "kg_unit.cu");
}

// The heavy headers a cuda unit's precompiled prefix may hold besides the lean
// <torch/extension.h>: when the source includes them in its leading block, they join the prefix
// (includes::leading_includes), so that their headers are preprocessed and precompiled once per
// toolchain. The CUDA ones only with a CUDA libtorch (without it they do not build).
std::vector<std::string> prefix_headers() {
  std::vector<std::string> h = {"ATen/ATen.h"};
  if (KG_TORCH_CUDA) h.push_back("ATen/cuda/CUDAContext.h");
  return h;
}

}  // namespace

std::string cuda_prefix(const std::vector<std::string>& headers) {
  std::string prefix = glue::cuda_unit_prefix();
  if (headers.empty()) return prefix;
  prefix += "// the submission's own leading includes, precompiled with the prefix\n";
  for (const auto& h : headers) prefix += "#include <" + h + ">\n";
  return prefix;
}

std::string cuda_module_id() { return nvcc::module_id("kernelgate cuda unit"); }

std::vector<std::vector<std::string>> cuda_prefix_variants() {
  std::vector<std::vector<std::string>> v = {{}};
  for (const auto& h : prefix_headers()) v.push_back({h});
  if (prefix_headers().size() == 2) v.push_back(prefix_headers());
  return v;
}

namespace {

// The cpu kind's one g++ command over `glue` (kg_glue.cc), making `artifact`; `source` says which
// precompiled headers apply, `extra` are flags the source asked for (load_inline's extra_cflags).
Plan plan_cpu_unit(const std::string& glue, const std::string& artifact, const std::string& source, const std::vector<std::string>& extra,
                   const BuildOptions& options) {
  Plan p;
  p.generated.push_back({"kg_glue.cc", glue});
  p.artifact = artifact;
  p.argv = {KG_CXX_COMPILER};
  for (const auto& f : toolchain::cxx_flags()) p.argv.push_back(f);
  // <torch/extension.h> is the shim here too (the real one needs Python's headers).
  p.ro.push_back(toolchain::shim_dir());
  p.argv.push_back("-I" + toolchain::shim_dir());
  std::string rejected;
  std::string prelude = toolchain::prelude_dir(options, &rejected);
  if (!rejected.empty()) p.rejected.push_back(rejected);
  if (!prelude.empty()) {
    p.ro.push_back(prelude);
    p.argv.insert(p.argv.end(), {"-include", prelude + "/kg_prelude.h"});
    std::vector<std::string> covered = includes::read_covered(prelude);
    for (const auto& f : shim::files()) covered.insert(std::lower_bound(covered.begin(), covered.end(), f.first), f.first);
    p.notes.push_back(includes::coverage_note(includes::angle_includes(source), covered, "precompiled prelude"));
  }
  p.argv.insert(p.argv.end(), extra.begin(), extra.end());
  p.argv.insert(p.argv.end(), {"-shared", "kg_glue.cc", "-o", p.artifact});
  for (const auto& f : toolchain::link_flags(false)) p.argv.push_back(f);
  p.outputs = {p.artifact};
  p.key_text = "prelude " + (prelude.empty() ? std::string("none") : toolchain::recorded_digest(prelude));
  return p;
}

}  // namespace

Plan plan_cpu(const OpFolder& op, const c10::FunctionSchema& schema, const Signature& sig, const std::string& src_name,
              const std::string& source, const BuildOptions& options) {
  return plan_cpu_unit(glue::cpu_unit(op, schema, sig, "src/" + src_name), op.folder + ".so", source, {}, options);
}

Plan plan_inline_cpu(const InlineUnits& units, const std::vector<std::string>& cxx_extra, const BuildOptions& options) {
  return plan_cpu_unit(units.glue, units.artifact, units.cpp_source, cxx_extra, options);
}

// cuda: nvcc compiles the submission's unit while g++ compiles the registration against the
// precompiled prelude (in parallel), then g++ links. One sandboxed /bin/sh runs the steps. nvcc's
// own steps run as two parallel chains when its dry run has the expected shape (nvcc_pipeline.h),
// else nvcc runs whole. `sh kg_build.sh full` builds the unit against all of ATen (see the shim
// in shim.cc); build() retries that way when the lean unit lacks a name. With the chains, the host
// compile reads only the submission's part of cudafe++'s output when the rest is the precompiled
// host prefix's bytes (toolchain::cuda_host_prefix): every unit starts with the same includes.
namespace {

// What a cuda-kind build compiles: the nvcc unit after the common prefix (cuda_unit_prefix()),
// the g++ unit, the artifact's name and the source that decides the hoisted includes; flags
// the source asked for (load_inline's), the g++ unit's ahead of its file, nvcc's with nvcc run
// whole (its dry run's chains are for kernelgate's own flags).
struct CudaUnits {
  std::string unit_body, glue, artifact, source;
  std::vector<std::string> cxx_extra, nvcc_extra;
  bool glue_sees_shim = false;  // the g++ unit includes <torch/extension.h> (load_inline's main.cpp)
  bool lean_aten = true;        // the source's <ATen/ATen.h> and <ATen/cuda/CUDAContext.h> read the lean shim first
};

// Whether the source includes a header the shim reads as the lean <torch/extension.h> in a first
// build (shim.cc: <ATen/ATen.h>, <ATen/cuda/CUDAContext.h>).
bool includes_lean_able(const std::string& source) {
  const std::vector<std::string> heavy = prefix_headers();
  for (const auto& h : includes::angle_includes(source))
    if (std::find(heavy.begin(), heavy.end(), h) != heavy.end()) return true;
  return false;
}

Plan plan_cuda_units(const CudaUnits& in, const std::string& arch, const BuildOptions& given) {
  BuildOptions options = given;
  if (!in.nvcc_extra.empty()) options.nvcc_whole = true;
  Plan p;
  // A first build reads the lean shim for the source's own <ATen/ATen.h> and
  // <ATen/cuda/CUDAContext.h> (the plain prefix: no heavy header is hoisted); build.cc builds
  // again with lean_aten off when that build fails. Otherwise the unit is the prefix, with the
  // source's leading heavy includes moved into it, then the rest.
  p.lean_aten = options.precompiled_includes && in.lean_aten && !options.nvcc_whole && includes_lean_able(in.source);
  const std::vector<std::string> hoisted =
      options.precompiled_includes && !p.lean_aten ? includes::leading_includes(in.source, prefix_headers()) : std::vector<std::string>{};
  const std::string prefix = cuda_prefix(hoisted);
  const std::string unit =
      prefix + (p.lean_aten ? "#define KG_LEAN_ATEN_INCLUDES 1  // the source's ATen/ATen.h: the lean shim first\n" : "") + in.unit_body;
  if (p.lean_aten)
    p.notes.push_back("lean ATen includes: the source's own " + join(prefix_headers(), " or ") +
                      " read as the lean <torch/extension.h> (a unit that fails to build is built again with the real headers)");
  const std::string& source = in.source;
  p.generated.push_back({"kg_unit.cu", unit});
  p.generated.push_back({"kg_glue.cc", in.glue});
  p.artifact = in.artifact;
  std::vector<std::string> nvcc = {KG_NVCC};
  for (const auto& f : toolchain::nvcc_flags(arch)) nvcc.push_back(f);
  nvcc.insert(nvcc.end(), in.nvcc_extra.begin(), in.nvcc_extra.end());
  nvcc.insert(nvcc.end(), {"-c", "kg_unit.cu", "-o", "kg_unit.o"});
  p.ro.push_back(toolchain::shim_dir());  // <torch/extension.h> without Python
  std::vector<std::string> cxx = {KG_CXX_COMPILER};
  for (const auto& f : toolchain::cxx_flags()) cxx.push_back(f);
  if (in.glue_sees_shim) cxx.push_back("-I" + toolchain::shim_dir());
  std::string rejected;
  std::string prelude = toolchain::prelude_dir(options, &rejected);
  if (!rejected.empty()) p.rejected.push_back(rejected);
  if (!prelude.empty()) {
    p.ro.push_back(prelude);
    cxx.insert(cxx.end(), {"-include", prelude + "/kg_prelude.h"});
  }
  cxx.insert(cxx.end(), in.cxx_extra.begin(), in.cxx_extra.end());
  cxx.insert(cxx.end(), {"-c", "kg_glue.cc", "-o", "kg_glue.o"});
  std::vector<std::string> link = {KG_CXX_COMPILER, "-shared", "kg_unit.o", "kg_glue.o", "-o", p.artifact};
  for (const auto& f : toolchain::link_flags(true)) link.push_back(f);

  std::string why = "BuildOptions::nvcc_whole";
  std::optional<nvcc::Pipeline> pipe;
  rejected.clear();
  if (!options.nvcc_whole) pipe = nvcc::parse_dryrun(toolchain::nvcc_dryrun(arch, options, &rejected), "$ATEN", &why);
  if (!rejected.empty()) p.rejected.push_back(rejected);
  // One module id for every unit (the prefix's output names it); each artifact is loaded on its own
  // (RTLD_LOCAL), and the id only has to agree between cudafe++ and cicc of one unit.
  const std::string module_id = cuda_module_id();
  std::string host_prefix_step, splice_function, host_prefix_digest;
  if (pipe) {
    rejected.clear();
    auto hp = toolchain::cuda_host_prefix(*pipe, prefix, module_id, arch, options, &rejected);
    if (!rejected.empty()) p.rejected.push_back(rejected);
    if (hp) {
      std::vector<std::string> covered = includes::read_covered(hp->dir);
      if (p.lean_aten)  // read as the lean shim, which the prefix holds
        for (const auto& h : prefix_headers()) covered.insert(std::lower_bound(covered.begin(), covered.end(), h), h);
      p.notes.push_back(
          includes::coverage_note(includes::angle_includes(source), covered,
                                  hoisted.empty() ? "precompiled prefix" : "precompiled prefix with the source's " + join(hoisted, ", ")));
      splice_function = splice_preprocess(*pipe, *hp, prefix, unit, p);
      p.ro.push_back(hp->dir);
      host_prefix_digest = "host prefix " + toolchain::recorded_digest(hp->dir);
      const std::string src = pipe->host_source, header = sh_quote(hp->header);
      host_prefix_step = " && { ! cmp -s -n " + std::to_string(hp->bytes) + " " + header + " " + src +
                         " || { { printf '#include \"%s\"\\n' " + header + "; tail -c +" + std::to_string(hp->bytes + 1) + " " + src +
                         "; } > " + src + ".rest && mv " + src + ".rest " + src + " && echo precompiled > host-prefix.txt; }; }";
      p.notes_if_file.push_back({"host-prefix.txt", "host prefix precompiled: the host compile read only the submission's part"});
    }
  }
  std::ostringstream sh;
  sh << "# kernelgate cuda-kind build (generated)\n"
     << "ATEN=\"\"; [ \"${1:-}\" = full ] && ATEN=-DKG_FULL_ATEN=1\n"
     << "# each step's start and end, for BuildResult::steps\n"
     << "mark() { echo \"$1 $(date +%s.%N 2>/dev/null)\" >> " << kStepsFile << "; }\n"
     << "mark script-start\n"
     << "( mark glue-start; " << sh_line(cxx) << " > glue.log 2>&1; echo $? > glue.rc; mark glue-end ) &\n";
  if (pipe) {
    // unit.log gets one chain's log: both front ends report the same source errors.
    sh << "# nvcc's steps (from nvcc --dryrun), host and device chains side by side\n";
    for (const auto& e : pipe->env) sh << "export " << e << "\n";
    sh << "printf '%s' " << sh_quote(module_id) << " > " << pipe->module_id_file << "\n" << splice_function;
    if (!host_prefix_step.empty())
      sh << "# cudafe++'s output starting with the precompiled host prefix's bytes: the host compile reads the rest\n";
    sh << "( mark host-chain-start; ( " << join(pipe->host, " && ") << host_prefix_step
       << " ) > unit-host.log 2>&1; echo $? > unit-host.rc; mark host-chain-end ) &\n"
       << "mark device-chain-start\n"
       << "( " << join(pipe->device, " && ") << " ) > unit-device.log 2>&1; echo $? > unit-device.rc\n"
       << "mark device-chain-end\n"
       << "wait\n"
       << "if [ \"$(cat unit-host.rc)\" != 0 ]; then cat unit-host.log > unit.log; exit 1; fi\n"
       << "if [ \"$(cat unit-device.rc)\" != 0 ]; then cat unit-device.log > unit.log; exit 1; fi\n"
       << "mark host-compile-start\n"
       << pipe->host_compile << " > unit.log 2>&1 || exit 1\n"
       << "mark host-compile-end\n"
       << "[ \"$(cat glue.rc)\" = 0 ] || exit 1\n";
  } else {
    p.notes.push_back("nvcc whole, not its chains side by side");
    sh << "# nvcc whole (" << replace_all(why, "\n", " ") << ")\n"
       << "mark nvcc-start\n"
       << sh_line(nvcc) << " $ATEN > unit.log 2>&1; echo $? > unit.rc\n"
       << "mark nvcc-end\n"
       << "wait\n"
       << "[ \"$(cat unit.rc)\" = 0 ] && [ \"$(cat glue.rc)\" = 0 ] || exit 1\n";
  }
  sh << "mark link-start\n" << sh_line(link) << " > link.log 2>&1 || exit 1\nmark link-end\n";
  p.generated.push_back({"kg_build.sh", sh.str()});
  p.argv = {"/bin/sh", "kg_build.sh"};
  p.logs = {"unit.log", "glue.log", "link.log"};
  p.outputs = {p.artifact};
  p.key_text = "prelude " + (prelude.empty() ? std::string("none") : toolchain::recorded_digest(prelude)) + "\n" + sh.str() + "\n" +
               host_prefix_digest;
  return p;
}

}  // namespace

Plan plan_cuda(const OpFolder& op, const c10::FunctionSchema& schema, const Signature& sig, const std::string& src_name,
               const std::string& source, const std::string& arch, const BuildOptions& options, bool lean_aten) {
  CudaUnits in;
  in.lean_aten = lean_aten;
  in.unit_body = glue::cuda_unit(op, sig, "src/" + src_name).substr(glue::cuda_unit_prefix().size());
  in.glue = glue::cuda_registration(op, schema, sig);
  in.artifact = op.folder + ".so";
  in.source = source;
  return plan_cuda_units(in, arch, options);
}

Plan plan_inline_cuda(const InlineUnits& units, const std::vector<std::string>& cxx_extra, const std::vector<std::string>& nvcc_extra,
                      const std::string& arch, const BuildOptions& options, bool lean_aten) {
  CudaUnits in;
  in.lean_aten = lean_aten;
  in.unit_body = units.cuda_unit_body;
  in.glue = units.glue;
  in.artifact = units.artifact;
  in.source = units.cuda_source;
  in.cxx_extra = cxx_extra;
  in.nvcc_extra = nvcc_extra;
  in.glue_sees_shim = true;
  return plan_cuda_units(in, arch, options);
}

Plan plan_nvrtc(const OpFolder& op, const launch::Table& table, const std::string& src_name, const std::string& arch) {
  Plan p;
  p.artifact = "kernel.cubin";
  p.argv = {toolchain::nvrtc_helper_path(), "--arch", arch, "--out", p.artifact, "--names", "names.txt", "--display",
            op.folder + "/" + src_name};
  for (const auto& n : table.kernel_names()) p.argv.insert(p.argv.end(), {"--name", n});
  p.argv.push_back("src/" + src_name);
  p.ro.push_back(fs::path(toolchain::nvrtc_helper_path()).parent_path().string());
  p.outputs = {p.artifact, "launch.txt"};
  p.key_text = launch::to_text(table);
  return p;
}

std::vector<std::pair<std::string, double>> read_steps(const std::string& path) {
  std::string text;
  std::vector<std::pair<std::string, double>> out;
  if (!read_file(path, &text) || text.size() > 64 * 1024) return out;
  std::vector<std::pair<std::string, double>> starts;
  std::map<std::string, double> ends;
  double first = 0, last = 0;
  std::istringstream in(text);
  std::string name;
  double t;
  while (in >> name >> t) {
    first = first == 0 ? t : std::min(first, t);
    last = std::max(last, t);
    auto dash = name.rfind('-');
    if (dash == std::string::npos) continue;
    const std::string step = name.substr(0, dash), edge = name.substr(dash + 1);
    if (edge == "start") starts.push_back({step, t});
    else if (edge == "end") ends[step] = t;
  }
  for (const auto& [step, t0] : starts)
    if (step != "script" && ends.count(step) && ends[step] >= t0) out.push_back({step, ends[step] - t0});
  if (last > first) out.push_back({"script", last - first});
  return out;
}

}  // namespace kg::loader

#include "syntax_check.h"

#include "build_plan.h"
#include "glue.h"
#include "toolchain.h"
#include "util.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kg::loader {
namespace {

// A unit written into the check's folder: `<folder>/kg_glue.cc` including `<folder>/src/<source>`.
struct Unit {
  size_t index = 0;
  std::string path;  // relative to the check's folder
  Plan plan;
};

// The cpu build's command with its output and link left out: everything before "-shared".
std::vector<std::string> compile_words(const Plan& plan) {
  const auto shared = std::find(plan.argv.begin(), plan.argv.end(), "-shared");
  if (shared == plan.argv.end()) throw std::runtime_error("the cpu build's command has no -shared: " + join(plan.argv, " "));
  std::vector<std::string> argv(plan.argv.begin(), shared);
  argv.push_back("-fsyntax-only");
  return argv;
}

Unit write_unit(const OpFolder& op, size_t index, const BuildOptions& options, const fs::path& dir) {
  if (op.kind != Kind::Cpu) throw std::runtime_error(op.folder + ": only the cpu kind is checked this way");
  const c10::FunctionSchema& schema = aten_schema(op.op);
  const std::string src_name = fs::path(op.source).filename().string();
  Unit u{index, op.folder + "/kg_glue.cc", plan_cpu(op, schema, cpp_signature(schema), src_name, options)};
  std::string source;
  if (!read_file(op.source, &source)) throw std::runtime_error(op.source + ": cannot read");
  std::error_code ec;
  fs::create_directories(dir / op.folder / "src", ec);
  if (ec) throw std::runtime_error((dir / op.folder).string() + ": cannot create: " + ec.message());
  write_file((dir / op.folder / "src" / src_name).string(), source);
  for (const auto& [name, text] : u.plan.generated) write_file((dir / op.folder / name).string(), text);
  return u;
}

// The translation unit of several units: each included as it is, its wrapper renamed so that the
// units' anonymous namespaces do not collide. Template instantiations shared between units (the
// registration's, per argument type) are then compiled once, and the prelude is loaded once.
std::string batch_unit(const std::vector<const Unit*>& units) {
  std::string o = "// kernelgate syntax check: " + std::to_string(units.size()) + " registration units\n";
  for (const Unit* u : units)
    o += std::string("#define ") + glue::kCpuEntry + " " + glue::kCpuEntry + "_" + std::to_string(u->index) + "\n#include " +
         cpp_string_literal(u->path) + "\n#undef " + glue::kCpuEntry + "\n";
  return o;
}

// Compiles `units` in one sandboxed run (one translation unit when there are several); the
// record's output is the compiler's log.
sandbox::Record compile_units(const std::vector<const Unit*>& units, const BuildOptions& options, const fs::path& dir) {
  std::vector<std::string> argv = compile_words(units.front()->plan);
  std::vector<std::string> ro = toolchain::binds();
  for (const Unit* u : units)
    if (compile_words(u->plan) != compile_words(units.front()->plan))
      throw std::runtime_error(u->path + ": planned with other compiler flags than " + units.front()->path);
  if (units.size() == 1) {
    argv.push_back(units.front()->path);
  } else {
    const std::string name = "batch-" + std::to_string(units.front()->index) + ".cc";
    write_file((dir / name).string(), batch_unit(units));
    argv.push_back(name);
  }
  ro.insert(ro.end(), units.front()->plan.ro.begin(), units.front()->plan.ro.end());
  BuildOptions o = options;
  o.time_s = options.time_s * static_cast<double>(units.size());
  return sandbox::run(toolchain::compile_spec(argv, ro, dir.string(), o));
}

std::string record_log(const sandbox::Record& r, const fs::path& dir) {
  std::string log = replace_all(r.stderr_text + r.stdout_text, dir.string() + "/", "");
  if (r.status != sandbox::Status::OK && r.status != sandbox::Status::RE)
    log += std::string("compiler ") + sandbox::status_name(r.status) + ": " + r.message + "\n";
  return log;
}

void check_batch(const std::vector<const Unit*>& batch, const BuildOptions& options, const fs::path& dir, std::vector<SyntaxCheck>& out) {
  const sandbox::Record r = compile_units(batch, options, dir);
  if (r.status == sandbox::Status::OK) {
    for (const Unit* u : batch) out[u->index].ok = true;
    return;
  }
  if (batch.size() == 1) {
    out[batch.front()->index].log = record_log(r, dir);
    return;
  }
  for (const Unit* u : batch) check_batch({u}, options, dir, out);
}

}  // namespace

std::vector<SyntaxCheck> check_syntax(const std::vector<OpFolder>& ops, const BuildOptions& options, size_t per_process) {
  static std::atomic<unsigned> serial{0};
  const fs::path dir = fs::path(options.work_dir.empty() ? cache_root() + "/nocache" : options.work_dir) /
                       ("syntax-check-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
  std::error_code ec;
  remove_tree(dir.string(), ec);
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir.string() + ": cannot create: " + ec.message());
  std::vector<SyntaxCheck> out(ops.size());
  std::vector<Unit> units;
  for (size_t i = 0; i < ops.size(); ++i) {
    out[i].op = ops[i].op;
    try {
      units.push_back(write_unit(ops[i], i, options, dir));
    } catch (const std::exception& e) { out[i].log = e.what(); }
  }
  const size_t step = std::max<size_t>(1, per_process);
  for (size_t at = 0; at < units.size(); at += step) {
    std::vector<const Unit*> batch;
    for (size_t i = at; i < std::min(units.size(), at + step); ++i) batch.push_back(&units[i]);
    check_batch(batch, options, dir, out);
  }
  remove_tree(dir.string(), ec);
  return out;
}

}  // namespace kg::loader

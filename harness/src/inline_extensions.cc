// load_inline's extensions on the supervisor's side (kernelgate/inline_inspection.h), and a python op
// source's extensions: listed by a runner of their own, built, and staged beside a copy of the
// source that every runner of the op then loads.
#include "kernelgate/inline_inspection.h"

#include "op_evaluation.h"

#include "kernelgate/protocol.h"
#include "kernelgate/rules.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <shared_mutex>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kg::harness {

std::string python_load_limit(const std::string& load_message) {
  if (load_message.find(protocol::kCppExtensionRefused) != std::string::npos)
    return "it asks torch.utils.cpp_extension (load_inline) for what kernelgate does not build (docs/kernelbench.md, \"load_inline\")";
  if (load_message.find(protocol::kTritonRefused) != std::string::npos)
    return "it imports Triton, whose JIT runs ptxas and a C compiler as subprocesses, which the runner's sandbox refuses "
           "(docs/submissions.md, \"Python kernels\")";
  return "";
}

std::vector<c10::IValue> extension_requests_call() {
  return {c10::IValue(static_cast<int64_t>(protocol::ModelAction::Extensions)), c10::IValue(static_cast<int64_t>(0)),
          c10::IValue(c10::List<at::Tensor>())};
}

std::vector<loader::InlineExtension> read_extension_requests(const loader::CallOutcome& o) {
  using K = loader::CallOutcome::Kind;
  if (o.kind != K::Ok)
    throw std::runtime_error("its runner did not list them (" + (o.message.empty() ? std::string("no answer") : o.message) + ")");
  if (o.returns.size() != 1 || !o.returns[0].isTensorList()) throw std::runtime_error("its runner's answer is not a list of tensors");
  const std::vector<at::Tensor> tensors = o.returns[0].toTensorVector();
  if (tensors.empty() || tensors[0].scalar_type() != at::kLong || tensors[0].numel() != 1)
    throw std::runtime_error("its runner gave no count");
  const int64_t n = tensors[0].item<int64_t>();
  if (n < 0 || n > static_cast<int64_t>(protocol::kMaxInlineExtensions) ||
      tensors.size() != 1 + static_cast<size_t>(n) * protocol::kInlineExtensionFields)
    throw std::runtime_error("its runner listed " + std::to_string(n) + " calls in " + std::to_string(tensors.size()) + " tensors");
  std::vector<loader::InlineExtension> out;
  for (int64_t k = 0; k < n; ++k) {
    std::vector<std::string> fields;
    for (size_t f = 0; f < protocol::kInlineExtensionFields; ++f) {
      const at::Tensor& t = tensors[1 + static_cast<size_t>(k) * protocol::kInlineExtensionFields + f];
      if (t.scalar_type() != at::kByte || t.dim() != 1) throw std::runtime_error("a field that is not bytes");
      const at::Tensor c = t.contiguous();
      fields.emplace_back(reinterpret_cast<const char*>(c.data_ptr<uint8_t>()), static_cast<size_t>(c.numel()));
    }
    out.push_back(loader::parse_inline_extension(fields));
  }
  return out;
}

bool build_inline_extensions(OpResult& r, const std::vector<loader::InlineExtension>& asked, const loader::BuildOptions& bo,
                             const policy::Policy& policy, std::vector<loader::BuildResult>* built) {
  for (const loader::InlineExtension& ext : asked) {
    const loader::BuildResult b = loader::build_inline_extension(ext, bo);
    r.build_s += b.seconds;
    r.build_cache_hit = (built->empty() || r.build_cache_hit) && b.cache_hit;
    if (!b.cache_rejected.empty()) r.build_cache_rejected = b.cache_rejected;
    for (const std::string& n : b.notes) r.build_notes.push_back("load_inline(" + ext.name + "): " + n);
    if (!b.ok) {
      if (b.record.status == sandbox::Status::XX && !b.record.message.empty()) {
        r.error = "build sandbox failed: " + b.record.message;
        return false;
      }
      r.build_log = b.log.substr(0, 8000);
      Failure f;
      f.category = policy::Category::CompileError;
      f.label = "building load_inline(" + ext.name + ")";
      f.message = "load_inline(" + ext.name + "): " + b.error;
      r.failures.push_back(std::move(f));
      if (std::string evidence = policy::rule_forbidden_library_unlinked(loader::undefined_references(b.log), policy); !evidence.empty())
        violation(r, policy::Rule::ForbiddenLibrary, evidence);
      return false;
    }
    built->push_back(b);
    if (!inspect_inline_extension(r, b.artifact, ext.cuda_sources.empty() ? loader::Kind::Cpu : loader::Kind::Cuda, bo, policy))
      return false;
  }
  return true;
}

namespace evaluation {
namespace {

bool mentions_load_inline(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  return text.find("load_inline") != std::string::npos;
}

// Copies `from` to `to` whole (a file the runner's box will read).
void copy_for_runner(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) throw std::runtime_error("cannot copy " + from.filename().string() + " for the runner: " + ec.message());
}

}  // namespace

bool build_python_op_extensions(OpState& op, const loader::BuildOptions& bo) {
  if (op.folder.kind != loader::Kind::Python || !mentions_load_inline(op.request.artifact)) return true;
  // A runner of its own runs the source once with its load_inline calls recorded; it is discarded.
  // A source that does not load there fails the same way when the op's runner loads it.
  std::vector<loader::InlineExtension> asked;
  {
    std::shared_lock<DeviceLock> shared;  // the source's own code runs on the device: judging's side of the lock
    if (op.run.options.device_lock) shared = std::shared_lock<DeviceLock>(*op.run.options.device_lock);
    loader::LoadRequest listing = op.request;
    listing.list_extensions = true;
    std::unique_ptr<loader::RunnerClient> runner;
    if (op.run.start(&runner, listing)) {
      if (runner && runner->alive()) runner->finish();
      return true;
    }
    loader::CallOptions co;
    co.device = op.run.device();
    const loader::CallOutcome o = runner->call(extension_requests_call(), 1, op.policy.run_call_time_s, co);
    runner->finish();
    try {
      asked = read_extension_requests(o);
    } catch (const std::exception& e) {
      if (o.kind == loader::CallOutcome::Kind::ProtocolViolation) violation(op.result, policy::Rule::ProtocolViolation, o.message);
      op.result.error = std::string("kernelgate could not read the kernel's load_inline calls: ") + e.what();
      return false;
    }
  }
  if (asked.empty()) return true;  // asked for later, inside a call: load_inline refuses there, kernelgate's limit
  std::vector<loader::BuildResult> built;
  const bool ok = build_inline_extensions(op.result, asked, bo, op.policy, &built);
  for (const loader::BuildResult& b : built) op.extensions_uncached.push_back(b);
  if (!ok) return false;
  // The source and its libraries in one folder of this evaluation's own, which every runner of the
  // op binds or has staged (RunnerClient::stage copies the kgext-*.so beside a .py).
  try {
    const fs::path dir = fs::path(bo.work_dir) / "python-extensions" / op.folder.folder;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error("cannot make " + dir.string() + ": " + ec.message());
    const fs::path source = dir / fs::path(op.request.artifact).filename();
    copy_for_runner(op.request.artifact, source);
    for (const loader::BuildResult& b : built) copy_for_runner(b.artifact, dir / fs::path(b.artifact).filename());
    op.request.artifact = source.string();
  } catch (const std::exception& e) {
    op.result.error = e.what();
    return false;
  }
  return true;
}

}  // namespace evaluation
}  // namespace kg::harness

// `kernelgate init`: op folders with a stub per op that carries the expected contract.
#include "kernelgate/loader.h"
#include "kernelgate/python_entry.h"
#include "util.h"

#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace kg::loader {
namespace {

std::string source_name(const std::string& folder, Kind kind) {
  return folder + "_implementation" + (kind == Kind::Cpu ? ".cpp" : kind == Kind::Python ? ".py" : ".cu");
}

// A keyword-only argument's default as Python writes it.
std::string python_literal(const c10::IValue& d) {
  if (d.isBool()) return d.toBool() ? "True" : "False";
  if (d.isInt()) return std::to_string(d.toInt());
  if (d.isDouble()) {
    std::ostringstream o;
    o << d.toDouble();
    const std::string s = o.str();
    return s.find_first_of(".en") == std::string::npos ? s + ".0" : s;
  }
  return "None";
}

// The python stub: the entry function with the overload's parameters (keyword-only ones after `*`,
// with their defaults: kg-runner leaves a keyword argument out of a call when it is the default).
std::string python_stub(const std::string& op, const c10::FunctionSchema& schema, const std::string& folder) {
  std::ostringstream o;
  o << "# " << op << ": " << schema << "\n"
    << "# python kind: this function, run by kg-runner's embedded interpreter with the machine's PyTorch.\n"
    << "# Arguments arrive as the aten op takes them (tensors as torch.Tensor). Computing the answer with\n"
    << "# PyTorch's own operators is fallback_to_torch; allocation, views and copies are fine.\n"
    << "import torch\n\n\n"
    << "def " << protocol::python_entry_names(folder, "").front() << "(";
  bool first = true, kwarg_only = false;
  for (const auto& a : schema.arguments()) {
    o << (first ? "" : ", ");
    if (a.kwarg_only() && !kwarg_only) o << "*, ";
    kwarg_only = kwarg_only || a.kwarg_only();
    o << a.name();
    if (a.kwarg_only() && a.default_value()) o << "=" << python_literal(*a.default_value());
    first = false;
  }
  o << "):\n    raise NotImplementedError(\"" << op << "\")\n";
  return o.str();
}

// A kernel parameter for each launch argument of the nvrtc stub.
std::string nvrtc_param(const c10::Argument& a, bool output) {
  auto k = a.real_type()->kind();
  if (k == c10::TypeKind::TensorType) return std::string(output ? "float* " : "const float* ") + a.name();
  if (k == c10::TypeKind::FloatType || k == c10::TypeKind::NumberType) return "double " + a.name();
  return "long long " + a.name();
}

bool launchable(const c10::Argument& a) {
  auto k = a.real_type()->kind();
  return k == c10::TypeKind::TensorType || k == c10::TypeKind::IntType || k == c10::TypeKind::SymIntType || k == c10::TypeKind::FloatType ||
         k == c10::TypeKind::NumberType || k == c10::TypeKind::BoolType;
}

std::string first_tensor(const c10::FunctionSchema& s) {
  for (const auto& a : s.arguments())
    if (a.real_type()->kind() == c10::TypeKind::TensorType) return a.name();
  return "";
}

}  // namespace

std::string stub_source(const std::string& op, Kind kind) {
  const c10::FunctionSchema& schema = aten_schema(op);
  const std::string folder = folder_for_op(op);
  if (kind == Kind::Python) return python_stub(op, schema, folder);
  std::ostringstream o;
  if (kind == Kind::Nvrtc) {
    o << "// " << op << ": " << schema << "\n"
      << "// nvrtc kind: device code only. kernelgate.toml's [launch] table says how kg-runner launches\n"
      << "// this kernel; outputs (out0, ...) arrive allocated with the reference's dtype and shape.\n"
      << "// Stub: writes nothing, so every test fails until it is implemented. The parameter types\n"
      << "// below assume float32 tensors; see docs/loader.md for per-dtype kernels.\n"
      << "extern \"C\" __global__ void " << folder << "_kernel(";
    bool first = true;
    for (const auto& a : schema.arguments())
      if (launchable(a)) {
        o << (first ? "" : ", ") << nvrtc_param(a, a.alias_info() && a.alias_info()->isWrite());
        first = false;
      }
    for (size_t i = 0; i < schema.returns().size(); ++i) {
      o << (first ? "" : ", ") << "float* out" << i;
      first = false;
    }
    o << (first ? "" : ", ") << "long long n) {\n"
      << "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
      << "  if (i >= n) return;\n"
      << "  // TODO: compute element i\n"
      << "}\n";
    return o.str();
  }
  Signature sig = cpp_signature(schema);
  const std::string fn = folder + "_kernel_impl";
  o << "// " << op << ": " << schema << "\n";
  if (kind == Kind::Cuda) {
    o << "// cuda kind: this host function and the __global__ kernels it launches, built by nvcc\n"
      << "// (the way torch.utils.cpp_extension.load_inline builds; <torch/extension.h> works).\n"
      << "#include <torch/extension.h>\n#include <cuda_runtime.h>\n#include <stdexcept>\n\n"
      << "// __global__ void " << folder << "_kernel(const float* in, float* out, int64_t n) { ... }\n\n";
  } else {
    o << "// cpu kind: this function, built by g++ against libtorch.\n"
      << "#include <ATen/ATen.h>\n#include <stdexcept>\n\n";
  }
  o << "// kernelgate calls exactly this signature (schema argument order):\n"
    << sig.declaration(fn) << " {\n"
    << "  throw std::runtime_error(" << cpp_string_literal(op + ": not implemented") << ");\n"
    << "}\n";
  return o.str();
}

std::string stub_launch_toml(const std::string& op) {
  const c10::FunctionSchema& schema = aten_schema(op);
  const std::string folder = folder_for_op(op);
  const std::string t = first_tensor(schema);
  std::string n = t.empty() ? "1" : "numel(" + t + ")";
  if (!schema.returns().empty()) n = "numel(out0)";
  std::ostringstream o;
  o << "# " << op << ": how kg-runner launches " << folder << "_kernel (docs/loader.md, \"The nvrtc kind\").\n"
    << "# Names: the overload's arguments";
  for (const auto& a : schema.arguments()) o << " " << a.name();
  o << "; outputs";
  for (size_t i = 0; i < schema.returns().size(); ++i) o << " out" << i;
  o << ".\n[launch]\nkernel = \"" << folder << "_kernel\"\n"
    << "grid = [\"ceil_div(" << n << ", 256)\"]\nblock = [256]\nshared_mem = 0\nargs = [";
  bool first = true;
  for (const auto& a : schema.arguments())
    if (launchable(a)) {
      o << (first ? "" : ", ") << "\"" << a.name() << "\"";
      first = false;
    }
  for (size_t i = 0; i < schema.returns().size(); ++i) {
    o << (first ? "" : ", ") << "\"out" << i << "\"";
    first = false;
  }
  o << (first ? "" : ", ") << "\"" << n << "\"]\n";
  return o.str();
}

InitResult write_stubs(const std::string& dir, const std::vector<std::string>& ops, Kind kind) {
  InitResult res;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create: " + ec.message());
  for (const auto& op : ops) {
    std::string src, toml;
    try {
      src = stub_source(op, kind);
      if (kind == Kind::Nvrtc) toml = stub_launch_toml(op);
    } catch (const std::exception& e) {
      res.problems.push_back({op, e.what()});
      continue;
    }
    const std::string folder = folder_for_op(op);
    fs::path d = fs::path(dir) / folder;
    fs::create_directories(d, ec);
    std::vector<std::pair<fs::path, std::string>> files = {{d / source_name(folder, kind), src}};
    if (kind == Kind::Nvrtc) files.push_back({d / "kernelgate.toml", toml});
    for (const auto& [path, text] : files) {
      if (fs::exists(path, ec)) {
        res.problems.push_back({path.string(), "exists; left unchanged"});
        continue;
      }
      write_file(path.string(), text);
      res.written.push_back(path.string());
    }
  }
  return res;
}

}  // namespace kg::loader

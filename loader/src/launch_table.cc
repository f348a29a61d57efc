// The supervisor's reader of the nvrtc kind's launch table: kernelgate.toml's [launch] tables,
// every expression parsed and every name checked against the overload's schema. The TOML side
// (parsing, where each value is, the error carrying file, line, column and key) is the reader
// policies use too (kernelgate/toml_reader.h); its errors become the protocol's launch::Error.
#include "kernelgate/launch_table.h"

#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "kernelgate/toml_reader.h"
#include "submission_files.h"

namespace kg::loader::launch {

using protocol::launch::bare_name;
using protocol::launch::collect_names;
using protocol::launch::Expr;
using protocol::launch::parse_expr;
using protocol::launch::valid_kernel_name;

namespace {

// The names a launch expression may use: the overload's arguments (by kind) and outputs.
struct Names {
  std::map<std::string, std::string> kind;  // name -> "tensor" | "number" | "unsupported: ..."
};

Names names_for(const c10::FunctionSchema& schema) {
  Names n;
  for (const auto& a : schema.arguments()) {
    auto k = a.real_type()->kind();
    if (k == c10::TypeKind::OptionalType) k = a.real_type()->castRaw<c10::OptionalType>()->getElementType()->kind();
    switch (k) {
      case c10::TypeKind::TensorType: n.kind[a.name()] = "tensor"; break;
      case c10::TypeKind::IntType:
      case c10::TypeKind::SymIntType:
      case c10::TypeKind::FloatType:
      case c10::TypeKind::BoolType:
      case c10::TypeKind::NumberType: n.kind[a.name()] = "number"; break;
      default: n.kind[a.name()] = "unsupported: " + a.real_type()->str() + " arguments cannot be used in launch expressions"; break;
    }
  }
  for (size_t i = 0; i < schema.returns().size(); ++i) n.kind["out" + std::to_string(i)] = "tensor";
  return n;
}

class TableReader {
 public:
  TableReader(const std::string& display, const c10::FunctionSchema& schema) : r_(display), names_(names_for(schema)) {}

  Table read(const toml::table& root) const {
    Table t;
    const toml::node* launch = root.get("launch");
    if (!launch)
      throw TomlError(TomlError::Kind::Value, r_.file(), 1, 1, "launch",
                      "no [launch] table (the nvrtc kind needs one; see docs/loader.md)");
    for (auto&& [k, v] : root) {
      std::string key(k.str());
      if (key != "launch" && key != "meta") fail(v, key, "unknown key (expected [launch])");
    }
    if (const auto* tab = launch->as_table()) {
      t.launches.push_back(one(*tab, "launch", &t));
    } else if (const auto* arr = launch->as_array()) {
      if (arr->empty()) fail(*launch, "launch", "empty [[launch]] list");
      if (arr->size() > 16) fail(*launch, "launch", "more than 16 launches");
      for (size_t i = 0; i < arr->size(); ++i) {
        const auto* tab = (*arr)[i].as_table();
        std::string key = "launch[" + std::to_string(i) + "]";
        if (!tab) fail((*arr)[i], key, "must be a table");
        t.launches.push_back(one(*tab, key, &t));
      }
    } else {
      fail(*launch, "launch", "must be a table ([launch]) or an array of tables ([[launch]])");
    }
    return t;
  }

 private:
  [[noreturn]] void fail(const toml::node& n, const std::string& key, const std::string& msg) const { r_.fail(n, key, msg); }

  // An expression given as a TOML string or integer; checked for syntax and names.
  std::string expr(const toml::node& n, const std::string& key, bool tensor_ok) const {
    std::string text;
    if (auto s = n.value<std::string>(); s && n.is_string()) text = *s;
    else if (n.is_integer()) text = std::to_string(*n.value<int64_t>());
    else if (n.is_floating_point()) {
      std::ostringstream o;
      o.precision(17);
      o << *n.value<double>();
      text = o.str();
    } else fail(n, key, "must be an expression string or a number");
    for (char c : text)
      if (c == '\n' || c == '\t' || c == '\r') fail(n, key, "an expression must be on one line");
    Expr e;
    try {
      e = parse_expr(text, key);
    } catch (const Error& err) {
      // column of the string's opening quote + 1 + the offset into the expression
      const auto& at = n.source().begin;
      throw TomlError(TomlError::Kind::Value, r_.file(), static_cast<int>(at.line),
                      static_cast<int>(at.column) + (n.is_string() ? err.column : 0), key, err.message);
    }
    std::vector<std::string> used;
    collect_names(e, &used);
    for (const auto& name : used) {
      auto it = names_.kind.find(name);
      if (it == names_.kind.end()) {
        std::string known;
        for (const auto& [k, v] : names_.kind) known += (known.empty() ? "" : ", ") + k;
        fail(n, key, "unknown name '" + name + "' (known: " + known + ")");
      }
      if (it->second.rfind("unsupported", 0) == 0) fail(n, key, "'" + name + "': " + it->second.substr(13));
    }
    const std::string bare = bare_name(e);
    if (!tensor_ok && !bare.empty() && names_.kind.count(bare) && names_.kind.at(bare) == "tensor")
      fail(n, key, "'" + bare + "' is a tensor; a number is needed here (numel(" + bare + ")?)");
    return text;
  }

  void dims(const toml::table& tab, const char* name, const std::string& base, std::string out[3], bool required) const {
    const toml::node* n = tab.get(name);
    std::string key = base + "." + name;
    if (!n) {
      if (required) fail(tab, key, "missing (1 to 3 expressions)");
      return;
    }
    if (const auto* arr = n->as_array()) {
      if (arr->empty() || arr->size() > 3) fail(*n, key, "needs 1 to 3 expressions");
      for (size_t i = 0; i < arr->size(); ++i) out[i] = expr((*arr)[i], key + "[" + std::to_string(i) + "]", false);
    } else {
      out[0] = expr(*n, key, false);
    }
  }

  Launch one(const toml::table& tab, const std::string& base, Table* table) const {
    Launch l;
    static const std::set<std::string> keys = {"kernel", "grid", "block", "shared_mem", "args", "contiguous_inputs"};
    for (auto&& [k, v] : tab)
      if (!keys.count(std::string(k.str())))
        fail(v, base + "." + std::string(k.str()), "unknown key (expected kernel, grid, block, shared_mem, args, contiguous_inputs)");
    const toml::node* kernel = tab.get("kernel");
    if (!kernel) fail(tab, base + ".kernel", "missing (the extern \"C\" __global__ function's name)");
    if (kernel->is_string()) {
      l.kernel = *kernel->value<std::string>();
      if (!valid_kernel_name(l.kernel)) fail(*kernel, base + ".kernel", "not a kernel name or name expression");
    } else if (const auto* bt = kernel->as_table()) {
      static const std::set<std::string> dtypes = {"float32", "float64", "float16", "bfloat16", "int32",     "int64",
                                                   "int16",   "int8",    "uint8",   "bool",     "complex64", "complex128"};
      for (auto&& [k, v] : *bt) {
        std::string dt(k.str());
        std::string key = base + ".kernel." + dt;
        if (!dtypes.count(dt)) fail(v, key, "unknown dtype (float32, float16, bfloat16, float64, int32, int64, ...)");
        if (!v.is_string() || !valid_kernel_name(*v.value<std::string>())) fail(v, key, "must be a kernel name");
        l.by_dtype[dt] = *v.value<std::string>();
      }
      if (l.by_dtype.empty()) fail(*kernel, base + ".kernel", "empty table");
    } else {
      fail(*kernel, base + ".kernel", "must be a name or a table of dtype = name");
    }
    dims(tab, "grid", base, l.grid, true);
    dims(tab, "block", base, l.block, true);
    if (const toml::node* sm = tab.get("shared_mem")) l.shared_mem = expr(*sm, base + ".shared_mem", false);
    const toml::node* args = tab.get("args");
    if (!args || !args->is_array()) {
      if (args) fail(*args, base + ".args", "must be an array of expressions");
      fail(tab, base + ".args", "missing (the kernel's arguments, in order)");
    }
    const auto* arr = args->as_array();
    if (arr->size() > 64) fail(*args, base + ".args", "more than 64 arguments");
    for (size_t i = 0; i < arr->size(); ++i) l.args.push_back(expr((*arr)[i], base + ".args[" + std::to_string(i) + "]", true));
    if (const toml::node* c = tab.get("contiguous_inputs")) {
      if (!c->is_boolean()) fail(*c, base + ".contiguous_inputs", "must be true or false");
      table->contiguous_inputs = *c->value<bool>();
    }
    return l;
  }

  TomlReader r_;
  Names names_;
};

}  // namespace

Table parse_text(const std::string& text, const std::string& display_path, const c10::FunctionSchema& schema) {
  if (text.empty()) throw Error("launch", 0, 0, "the nvrtc kind needs a kernelgate.toml with a [launch] table in the op folder");
  try {
    // No limit of its own: parse_file reads at most kMaxTableBytes, a build its op folder's 16 MiB.
    const toml::table root = parse_toml(text, display_path, std::numeric_limits<std::size_t>::max());
    return TableReader(display_path, schema).read(root);
  } catch (const TomlError& e) {
    // The protocol's error: the key (a syntax error's is "toml"), line, column and message.
    throw Error(e.kind == TomlError::Kind::Syntax ? "toml" : e.key, e.line, e.column, e.message);
  }
}

Table parse_file(const std::string& toml_path, const std::string& display_path, const c10::FunctionSchema& schema) {
  // A submission's file: read with no link followed, and bounded (submission_files.h).
  constexpr uint64_t kMaxTableBytes = 1u << 20;
  std::string text;
  try {
    const std::filesystem::path p(toml_path);
    text = submission::Dir::open_root(p.parent_path().empty() ? "." : p.parent_path().string())
               .read(p.filename().string(), kMaxTableBytes, "1 MiB a launch table may hold");
  } catch (const submission::FileError& e) { throw Error("launch", 0, 0, e.what()); }
  return parse_text(text, display_path, schema);
}

}  // namespace kg::loader::launch

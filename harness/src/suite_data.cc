// The data suites, `opinfo` and `traces`: trace files under harness/data/<suite>/, read with the
// trace parser (never evaluated), merged per overload and bounded to a few samples per overload.
#include "suites.h"

#include "kernelgate/operator_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kg::harness {
namespace {

using trace::Value;

void tensor_specs(const Value& v, std::vector<const trace::TensorSpec*>* out) {
  if (v.kind == Value::Kind::Tensor) out->push_back(&v.tensor);
  for (const auto& x : v.items) tensor_specs(x, out);
}

std::vector<const trace::TensorSpec*> tensors_of(const trace::Call& c) {
  std::vector<const trace::TensorSpec*> out;
  for (const auto& a : c.args) tensor_specs(a, &out);
  for (const auto& kv : c.kwargs) tensor_specs(kv.second, &out);
  return out;
}

// Why no tensor of the call can be built, "" when every one can.
std::string unbuildable_reason(const trace::Call& c) {
  for (const auto* t : tensors_of(c))
    if (std::string why = unmaterialisable_reason(*t); !why.empty()) {
      Value v;
      v.kind = Value::Kind::Tensor;
      v.tensor = *t;
      return trace::format_value(v) + ": " + why;
    }
  return "";
}

// The call's input elements, saturating at INT64_MAX; every tensor is buildable (its count fits).
int64_t input_elements(const trace::Call& c) {
  int64_t n = 0;
  for (const auto* t : tensors_of(c)) {
    int64_t k = 1;
    for (int64_t s : t->shape) k *= s;
    if (__builtin_add_overflow(n, k, &n)) return std::numeric_limits<int64_t>::max();
  }
  return n;
}

// A call line as a left-out entry names it: the overload and where the line is.
std::string sample_name(const std::string& op, const std::string& where) { return op + " at " + where; }

// A trace file: a regular file of at most kMaxTraceFileBytes (operator_files.h).
std::string read_trace_file(const fs::path& f) { return policy::read_operator_file(f.string(), kMaxTraceFileBytes, "trace file"); }

std::string dtype_signature(const trace::Call& c) {
  std::string s;
  for (const auto* t : tensors_of(c)) s += t->dtype + ",";
  return s;
}

std::string shape_signature(const trace::Call& c) {
  std::ostringstream o;
  for (const auto* t : tensors_of(c)) {
    o << t->dtype << "[";
    for (int64_t x : t->shape) o << x << ",";
    o << "]";
  }
  return o.str();
}

bool has_float_tensor(const trace::Call& c) {
  for (const auto* t : tensors_of(c))
    if (t->dtype == "f32" || t->dtype == "f64" || t->dtype == "f16" || t->dtype == "bf16") return true;
  return false;
}

struct Merged {
  trace::Call call;
  int64_t count = 0;
  size_t first_seen = 0;
  std::set<std::string> sources;
};

}  // namespace

std::string data_dir() {
  if (const char* e = std::getenv("KERNELGATE_DATA_DIR"); e && *e) return e;
  // This file is harness/src/suite_data.cc; the data lives beside src/.
  return (fs::path(__FILE__).parent_path().parent_path() / "data").string();
}

namespace {
// The *.txt entries of a directory, sorted; read_trace_file refuses any that is not a regular file.
std::vector<fs::path> trace_files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}
}  // namespace

std::vector<Sample> data_suite_samples(const std::string& suite, size_t per_op, LeftOut* left_out) {
  const fs::path dir = fs::path(data_dir()) / suite;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw std::runtime_error("suite '" + suite + "': no data directory " + dir.string() +
                             " (set KERNELGATE_DATA_DIR to the folder holding " + suite + "/)");
  return trace_samples(trace_files_in(dir), per_op, suite == "opinfo", left_out);
}

std::vector<Sample> trace_path_samples(const std::string& path, size_t per_op, LeftOut* left_out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) throw std::runtime_error("suite " + path + ": no such trace file or directory");
    throw std::runtime_error("suite " + path + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    auto files = trace_files_in(path);
    if (files.empty()) throw std::runtime_error("suite " + path + ": a directory with no *.txt trace files");
    return trace_samples(files, per_op, false, left_out);
  }
  if (!S_ISREG(st.st_mode))
    throw std::runtime_error("suite " + path + ": is " + policy::file_kind(st.st_mode) + ", not a trace file or a directory of them");
  return trace_samples({fs::path(path)}, per_op, false, left_out);
}

namespace {

// Per overload, the distinct calls of the files (by spec text), merged.
struct MergedCalls {
  std::map<std::string, std::map<std::string, Merged>> ops;  // op -> spec text -> merged call
  std::map<std::string, size_t> too_large;                   // op -> calls over the element bound
  std::map<std::string, std::string> foreign;                // non-aten operator -> first file naming it
};

// One trace file's calls merged into `m`; the calls no tensor can be built for and those over the
// element bound are left out, each with its reason.
void merge_file(const fs::path& f, MergedCalls* m, size_t* seen, LeftOut* left_out) {
  const std::string stem = f.stem().string();
  for (auto& entry : trace::parse_trace(read_trace_file(f), f.string())) {
    // The op as written after "aten.": a malformed one is left out later, by that name.
    const auto unqualified = names::in_trace_namespace(entry.name);
    if (!unqualified) {
      m->foreign.emplace(entry.name, stem);
      continue;
    }
    const std::string op(*unqualified);
    auto& calls = m->ops[op];
    for (auto& c : entry.calls) {
      const std::string where = f.string() + ":" + std::to_string(c.line);
      if (std::string why = unbuildable_reason(c); !why.empty()) {
        left_out->entries.push_back({sample_name(op, where), "no tensor can be built for it: " + why});
        left_out->unbuildable[op].push_back({trace::format_call(c), where + ": no tensor can be built for it: " + why});
        continue;
      }
      if (const int64_t n = input_elements(c); n > kMaxInputElements) {
        left_out->entries.push_back({sample_name(op, where), std::to_string(n) + " input elements, over the data suites' bound of 2^26 (" +
                                                                 std::to_string(kMaxInputElements) + ")"});
        m->too_large[op]++;
        continue;
      }
      std::string key = trace::format_spec(c);
      Merged& merged = calls[key];
      if (merged.count == 0) {
        merged.call = c;
        merged.first_seen = (*seen)++;
      }
      merged.count += c.count;
      merged.sources.insert(stem);
    }
  }
}

// An overload's picks: largest call counts first (ties in file order), one per distinct dtype
// combination, then distinct shapes, then the rest, in that order, at most `per_op`.
std::vector<const Merged*> pick(const std::map<std::string, Merged>& calls, size_t per_op) {
  std::vector<const Merged*> order;
  for (const auto& kv : calls) order.push_back(&kv.second);
  std::sort(order.begin(), order.end(),
            [](const Merged* a, const Merged* b) { return a->count != b->count ? a->count > b->count : a->first_seen < b->first_seen; });
  std::vector<const Merged*> picked;
  std::set<const Merged*> taken;
  auto pick_by = [&](const std::function<std::string(const trace::Call&)>& key) {
    std::set<std::string> keys;
    for (const Merged* m : picked) keys.insert(key(m->call));
    for (const Merged* m : order) {
      if (picked.size() >= per_op) return;
      if (taken.count(m) || !keys.insert(key(m->call)).second) continue;
      picked.push_back(m);
      taken.insert(m);
    }
  };
  pick_by(dtype_signature);
  pick_by(shape_signature);
  pick_by([](const trace::Call& c) { return trace::format_spec(c); });
  return picked;
}

// Matrix functions (decompositions, inverses, exponentials): NaN and huge entries make their
// result depend on the order of operations (the runner uses one thread, the reference may use
// more) rather than test the kernel.
bool is_matrix_function(const std::string& op) {
  static const char* const kMatrixFunctions[] = {
      "linalg_", "_linalg_",         "matrix_exp", "inverse",  "det",          "logdet", "slogdet", "cholesky", "lu",  "qr", "svd",
      "symeig",  "triangular_solve", "lstsq",      "pinverse", "matrix_power", "geqrf",  "orgqr",   "ormqr",    "eig", "_lu"};
  bool matrix_function = false;
  for (const char* m : kMatrixFunctions) matrix_function |= op.rfind(m, 0) == 0;
  return matrix_function;
}

// An overload's samples: its picks, and with special_values_sample (the opinfo suite) the first
// floating-point pick once more with special values, except for matrix functions.
void add_samples(const std::string& op, const std::vector<const Merged*>& picked, bool special_values_sample, std::vector<Sample>* out) {
  for (const Merged* m : picked) {
    Sample s;
    s.op = op;
    s.call = m->call;
    s.call.count = m->count;
    std::string src = *m->sources.begin();
    if (m->sources.size() > 1) src += " +" + std::to_string(m->sources.size() - 1);
    s.label = "cnt " + std::to_string(m->count) + ", " + src;
    out->push_back(std::move(s));
  }
  if (!special_values_sample || is_matrix_function(op)) return;
  for (const Merged* m : picked)
    if (has_float_tensor(m->call)) {
      Sample s;
      s.op = op;
      s.call = m->call;
      s.family = ValueFamily::Special;
      s.label = "special values, " + *m->sources.begin();
      out->push_back(std::move(s));
      break;
    }
}

}  // namespace

std::vector<Sample> trace_samples(const std::vector<fs::path>& files, size_t per_op, bool special_values_sample, LeftOut* left_out) {
  LeftOut ignored;
  if (!left_out) left_out = &ignored;
  MergedCalls merged;
  size_t seen = 0;
  for (const auto& f : files) merge_file(f, &merged, &seen, left_out);
  for (const auto& [name, file] : merged.foreign) left_out->entries.push_back({name, "not an aten operator (" + file + ")"});
  for (const auto& [op, n] : merged.too_large)
    if (merged.ops[op].empty())
      left_out->entries.push_back({op, "every call has more than 2^26 input elements (" + std::to_string(n) + " calls)"});

  std::vector<Sample> out;
  for (auto& [op, calls] : merged.ops)
    if (!calls.empty()) add_samples(op, pick(calls, per_op), special_values_sample, &out);
  return out;
}

}  // namespace kg::harness

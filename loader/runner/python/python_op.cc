// The python kind's op: the submission's source executed in a fresh module, its entry function
// registered as a dispatcher op under kernelgate's namespace with the aten overload's schema. The
// runner then calls it boxed like a cpu artifact's op, so everything the runner does around a call
// (timing, the dispatcher observer, poisoning, snapshots) is unchanged: the observer sees the
// registered op start, and every aten operator the Python code dispatches directly inside it.
#include <torch/csrc/python_headers.h>

#include "convert.h"
#include "interpreter.h"
#include "kernelgate/unique_fd.h"
#include "py_ref.h"
#include "python_plugin.h"

#include <ATen/ThreadLocalState.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/library.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kg::runner::python {
namespace {

constexpr size_t kMaxSourceBytes = 4u << 20;
constexpr size_t kTracebackBytes = 3000;

// The source, read whole from the file the runner was given (it is the artifact: a copy kernelgate
// made of the submission's file, in the runner's read-only staging folder).
std::string read_source(const std::string& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd.get(), buf, sizeof buf)) > 0 && out.size() <= kMaxSourceBytes) out.append(buf, static_cast<size_t>(n));
  if (n < 0) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  if (out.size() > kMaxSourceBytes) throw std::runtime_error(path + ": over " + std::to_string(kMaxSourceBytes >> 20) + " MiB");
  return out;
}

// The op's arguments as the kernel is called: BackendBench calls a kernel the way the aten op is
// called, so positional arguments go by position and keyword-only ones by name, the latter only
// when they differ from their default (a kernel written `def f(x, y)` still runs for add's
// default alpha).
bool is_default(const c10::Argument& a, const c10::IValue& v) {
  if (!a.default_value()) return false;
  const c10::IValue& d = *a.default_value();
  if (d.isNone() || v.isNone()) return d.isNone() && v.isNone();
  if ((d.isInt() || d.isDouble() || d.isBool()) && (v.isInt() || v.isDouble() || v.isBool())) return d.tagKind() == v.tagKind() && d == v;
  if (d.isString() && v.isString()) return d.toStringRef() == v.toStringRef();
  return false;
}

// The calling thread's dispatch state (dispatch-key guards, torch dispatch modes, RecordFunction's
// switch, grad mode) as it was before the kernel ran, put back when the call ends however it ends:
// a Python kernel can leave none of it changed for the runner's own operators after it returns
// (a TorchDispatchMode left on would run Python inside the runner's copies and checks).
class DispatchStateKept {
 public:
  DispatchStateKept() : modes_(c10::impl::TorchDispatchModeTLS::stack_len()) {}
  ~DispatchStateKept() { at::ThreadLocalState::setThreadLocalState(saved_); }
  DispatchStateKept(const DispatchStateKept&) = delete;
  DispatchStateKept& operator=(const DispatchStateKept&) = delete;
  // Whether the kernel left a torch dispatch mode on that was not on before (the mode stack is
  // where `TorchDispatchMode.__enter__` puts one, in libtorch 1.13 and 2.x alike; any other change
  // is undone without a word).
  bool mode_left_on() const { return c10::impl::TorchDispatchModeTLS::stack_len() != modes_; }

 private:
  const at::ThreadLocalState saved_;
  const int64_t modes_;
};

class PythonKernel final : public c10::OperatorKernel {
 public:
  PythonKernel(PyRef fn, c10::FunctionSchema schema, std::string entry)
      : fn_(std::move(fn)), schema_(std::move(schema)), entry_(std::move(entry)) {}

  // Called with the GIL released (the runner's code never holds it).
  void operator()(const c10::OperatorHandle&, c10::DispatchKeySet, c10::Stack* stack) {
    Gil gil;
    const auto& params = schema_.arguments();
    if (stack->size() < params.size()) throw std::runtime_error("kg-runner: fewer arguments than the schema has");
    const size_t base = stack->size() - params.size();
    PyRef positional = PyRef::steal(PyList_New(0));
    PyRef keywords = PyRef::steal(PyDict_New());
    if (!positional || !keywords) throw std::runtime_error("kg-runner: out of memory building a python call");
    for (size_t i = 0; i < params.size(); ++i) {
      const c10::Argument& a = params[i];
      const c10::IValue& v = (*stack)[base + i];
      if (a.kwarg_only() && is_default(a, v)) continue;
      PyRef value = to_python(v, a.real_type(), "argument " + a.name());
      const int rc = a.kwarg_only() ? PyDict_SetItemString(keywords.get(), a.name().c_str(), value.get())
                                    : PyList_Append(positional.get(), value.get());
      if (rc != 0) throw std::runtime_error("kg-runner: cannot pass argument " + a.name() + ":\n" + take_exception(kTracebackBytes));
    }
    stack->erase(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
    PyRef args = PyRef::steal(PyList_AsTuple(positional.get()));
    DispatchStateKept kept;  // restored before the GIL is released
    PyRef out = args ? PyRef::steal(PyObject_Call(fn_.get(), args.get(), keywords.get())) : PyRef();
    if (!out) throw std::runtime_error(entry_ + " raised:\n" + take_exception(kTracebackBytes));
    if (kept.mode_left_on())
      throw std::runtime_error(entry_ +
                               " returned with a torch dispatch mode still on (kernelgate switched it off): a kernel may not "
                               "leave Python running inside the runner's own operators");
    push_returns(out.get(), stack);
  }

 private:
  void push_returns(PyObject* out, c10::Stack* stack) const {
    const auto& returns = schema_.returns();
    if (returns.empty()) return;
    if (returns.size() == 1) {
      stack->push_back(from_python(out, returns[0].real_type(), entry_ + "'s return"));
      return;
    }
    if (!PyTuple_Check(out) && !PyList_Check(out))
      throw std::runtime_error(entry_ + " returned a " + Py_TYPE(out)->tp_name + ", expected a tuple of " + std::to_string(returns.size()));
    PyRef items = PyRef::steal(PySequence_Fast(out, "a tuple"));
    if (!items || PySequence_Fast_GET_SIZE(items.get()) != static_cast<Py_ssize_t>(returns.size())) {
      PyErr_Clear();
      throw std::runtime_error(entry_ + " returned a sequence of another length than the " + std::to_string(returns.size()) +
                               " values the schema returns");
    }
    for (size_t i = 0; i < returns.size(); ++i)
      stack->push_back(from_python(PySequence_Fast_GET_ITEM(items.get(), static_cast<Py_ssize_t>(i)), returns[i].real_type(),
                                   entry_ + "'s return " + std::to_string(i)));
  }

  PyRef fn_;
  c10::FunctionSchema schema_;
  std::string entry_;
};

// What the plugin registered: the dispatcher keeps the kernels while these live.
// Never destroyed: at exit the interpreter may no longer take the references back.
std::vector<std::unique_ptr<torch::Library>>& libraries() {
  static auto* l = new std::vector<std::unique_ptr<torch::Library>>();
  return *l;
}

// The module name and file name tracebacks show: the op folder's file, never the box's paths.
std::string shown_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Executes the source in a fresh module and returns the first entry function it defines.
// Throws std::runtime_error with the traceback. The GIL must be held.
PyRef load_entry(const std::string& source, const std::string& file, const std::vector<std::string>& entries, std::string* found) {
  PyRef code = PyRef::steal(Py_CompileStringExFlags(source.c_str(), file.c_str(), Py_file_input, nullptr, -1));
  if (!code) throw std::runtime_error("the python source does not compile:\n" + take_exception(kTracebackBytes));
  // Tracebacks quote the source from linecache, filled here so that Python never looks for the file.
  PyRef linecache = PyRef::steal(PyImport_ImportModule("linecache"));
  PyRef cache = linecache ? PyRef::steal(PyObject_GetAttrString(linecache.get(), "cache")) : PyRef();
  PyRef text = PyRef::steal(PyUnicode_FromStringAndSize(source.data(), static_cast<Py_ssize_t>(source.size())));
  PyRef lines = text ? PyRef::steal(PyObject_CallMethod(text.get(), "splitlines", "O", Py_True)) : PyRef();
  if (cache && lines) {
    PyRef entry = PyRef::steal(Py_BuildValue("(nOOs)", static_cast<Py_ssize_t>(source.size()), Py_None, lines.get(), file.c_str()));
    if (entry) PyDict_SetItemString(cache.get(), file.c_str(), entry.get());
  }
  PyErr_Clear();
  PyRef module = PyRef::steal(PyModule_New("kg_submission"));
  if (!module) throw std::runtime_error("cannot create the submission's module:\n" + take_exception(kTracebackBytes));
  PyObject* globals = PyModule_GetDict(module.get());
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyRef name = PyRef::steal(PyUnicode_FromString(file.c_str()));
  if (name) PyDict_SetItemString(globals, "__file__", name.get());
  PyRef done = PyRef::steal(PyEval_EvalCode(code.get(), globals, globals));
  if (!done) throw std::runtime_error("the python source raised while it was imported:\n" + take_exception(kTracebackBytes));
  for (const std::string& e : entries) {
    PyObject* fn = PyDict_GetItemString(globals, e.c_str());  // borrowed
    if (!fn) continue;
    if (!PyCallable_Check(fn)) throw std::runtime_error(file + ": " + e + " is a " + Py_TYPE(fn)->tp_name + ", not a function");
    *found = e;
    return PyRef::borrow(fn);
  }
  std::string names;
  for (const std::string& e : entries) names += (names.empty() ? "" : " or ") + e;
  throw std::runtime_error(file + " defines no function named " + names);
}

void register_op(PyRef fn, const std::string& entry, const std::string& registered, const std::string& aten_name,
                 const std::string& aten_overload) {
  const auto aten = c10::Dispatcher::singleton().findSchema({aten_name, aten_overload});
  if (!aten) throw std::runtime_error("no aten overload " + aten_name + (aten_overload.empty() ? "" : "." + aten_overload));
  const size_t sep = registered.find("::");
  if (sep == std::string::npos) throw std::runtime_error("bad registered name " + registered);
  c10::FunctionSchema schema = aten->schema().cloneWithName(registered, "");
  schema.setAliasAnalysis(c10::AliasAnalysisKind::FROM_SCHEMA);
  auto lib = std::make_unique<torch::Library>(torch::Library::FRAGMENT, registered.substr(0, sep), c10::nullopt, __FILE__, __LINE__);
  c10::FunctionSchema copy = schema;
  lib->def(std::move(copy),
           torch::CppFunction::makeFromBoxedFunctor(std::make_unique<PythonKernel>(std::move(fn), std::move(schema), entry)));
  libraries().push_back(std::move(lib));
}

void copy_error(const std::string& e, char* error, size_t size) {
  if (!size) return;
  const std::string s = sanitise(e, size - 1);
  std::memcpy(error, s.data(), s.size());
  error[s.size()] = 0;
}

int plugin_start(char* error, size_t size) {
  try {
    const std::string e = start_interpreter();
    if (e.empty()) return 0;
    copy_error(e, error, size);
  } catch (const std::exception& e) { copy_error(e.what(), error, size); }
  return 1;
}

int plugin_load(const char* source_path, const char* registered, const char* aten_name, const char* aten_overload,
                const char* const* entries, size_t n_entries, char* error, size_t size) {
  if (!Py_IsInitialized()) {
    copy_error("the interpreter was not started", error, size);
    return 1;
  }
  try {
    const std::string source = read_source(source_path);
    const std::vector<std::string> names(entries, entries + n_entries);
    // Every Python reference below is made and dropped with the GIL held; the kernel's moves into
    // the registered functor, which the dispatcher keeps for the runner's life.
    Gil gil;
    std::string found;
    PyRef fn = load_entry(source, shown_name(source_path), names, &found);
    register_op(std::move(fn), found, registered, aten_name, aten_overload);
    return 0;
  } catch (const std::exception& e) { copy_error(e.what(), error, size); }
  return 1;
}

const KgPythonPlugin kPlugin = {kKgPythonPluginVersion, plugin_start, plugin_load};

}  // namespace
}  // namespace kg::runner::python

extern "C" __attribute__((visibility("default"))) const KgPythonPlugin* kg_python_plugin() { return &kg::runner::python::kPlugin; }

// The python kind's op: the submission's source executed in a fresh module, its entry function
// registered as a dispatcher op under kernelgate's namespace with the aten overload's schema. The
// runner then calls it boxed like a cpu artifact's op, so everything the runner does around a call
// (timing, the dispatcher observer, poisoning, snapshots) is unchanged: the observer sees the
// registered op start, and every aten operator the Python code dispatches directly inside it.
#include <torch/csrc/python_headers.h>

#include "convert.h"
#include "dispatch_state.h"
#include "inline_extensions.h"
#include "interpreter.h"
#include "module.h"
#include "plugin_calls.h"
#include "py_ref.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kg::runner::python {
namespace {

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

// Executes the source in a fresh module and returns the first entry function it defines.
// Throws std::runtime_error with the traceback. The GIL must be held.
PyRef load_entry(const std::string& source, const std::string& file, const std::vector<std::string>& entries, std::string* found) {
  PyRef globals = execute_module(source, file, "kg_submission");
  for (const std::string& e : entries) {
    PyObject* fn = PyDict_GetItemString(globals.get(), e.c_str());  // borrowed
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

}  // namespace

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
    // load_inline finds the libraries kernelgate built for it staged beside the source.
    set_inline_extension_source(source_path, false);
    std::string found;
    PyRef fn = load_entry(source, shown_name(source_path), names, &found);
    register_op(std::move(fn), found, registered, aten_name, aten_overload);
    return 0;
  } catch (const std::exception& e) { copy_error(e.what(), error, size); }
  return 1;
}

}  // namespace kg::runner::python

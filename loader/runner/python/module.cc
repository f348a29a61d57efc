// Submitted Python files as modules: see module.h.
#include <torch/csrc/python_headers.h>

#include "module.h"

#include "interpreter.h"
#include "kernelgate/protocol.h"
#include "kernelgate/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace kg::runner::python {
namespace {

constexpr size_t kMaxSourceBytes = 4u << 20;

}  // namespace

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

std::string shown_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

PyRef execute_module(const std::string& source, const std::string& file, const char* module_name) {
  PyRef code = PyRef::steal(Py_CompileStringExFlags(source.c_str(), file.c_str(), Py_file_input, nullptr, -1));
  if (!code) throw std::runtime_error(std::string(protocol::kPythonDoesNotCompile) + ":\n" + take_exception(kTracebackBytes));
  PyRef linecache = PyRef::steal(PyImport_ImportModule("linecache"));
  PyRef cache = linecache ? PyRef::steal(PyObject_GetAttrString(linecache.get(), "cache")) : PyRef();
  PyRef text = PyRef::steal(PyUnicode_FromStringAndSize(source.data(), static_cast<Py_ssize_t>(source.size())));
  PyRef lines = text ? PyRef::steal(PyObject_CallMethod(text.get(), "splitlines", "O", Py_True)) : PyRef();
  if (cache && lines) {
    PyRef entry = PyRef::steal(Py_BuildValue("(nOOs)", static_cast<Py_ssize_t>(source.size()), Py_None, lines.get(), file.c_str()));
    if (entry) PyDict_SetItemString(cache.get(), file.c_str(), entry.get());
  }
  PyErr_Clear();
  PyRef module = PyRef::steal(PyModule_New(module_name));
  if (!module) throw std::runtime_error("cannot create the module:\n" + take_exception(kTracebackBytes));
  PyObject* globals = PyModule_GetDict(module.get());  // borrowed, kept alive by the reference below
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyRef name = PyRef::steal(PyUnicode_FromString(file.c_str()));
  if (name) PyDict_SetItemString(globals, "__file__", name.get());
  PyRef done = PyRef::steal(PyEval_EvalCode(code.get(), globals, globals));
  if (!done) throw std::runtime_error("the python source raised while it was imported:\n" + take_exception(kTracebackBytes));
  return PyRef::borrow(globals);
}

}  // namespace kg::runner::python

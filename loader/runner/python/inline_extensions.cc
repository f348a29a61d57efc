// The runner's half of load_inline: see inline_extensions.h.
#include <torch/csrc/python_headers.h>

#include "inline_extensions.h"

#include "kernelgate/protocol.h"

#include <ATen/Functions.h>

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace kg::runner::python {
namespace {

std::mutex g_mu;
std::string g_dir;             // the staged source's folder
bool g_take_requests = false;  // a KernelBench solution's load
std::vector<std::vector<std::string>> g_requests;
std::vector<void*> g_handles;  // never closed: the dispatcher holds their kernels

bool is_key(const char* s, Py_ssize_t n) {
  if (n != 64) return false;
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  return true;
}

PyObject* load(PyObject*, PyObject* arg) {
  Py_ssize_t n = 0;
  const char* key = PyUnicode_Check(arg) ? PyUnicode_AsUTF8AndSize(arg, &n) : nullptr;
  if (!key || !is_key(key, n)) {
    PyErr_Clear();
    PyErr_SetString(PyExc_ValueError, "kernelgate: an extension's key is 64 lowercase hex digits");
    return nullptr;
  }
  std::string path;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_dir.empty()) Py_RETURN_FALSE;
    path = g_dir + "/kgext-" + std::string(key, static_cast<size_t>(n)) + ".so";
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) Py_RETURN_FALSE;
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    const std::string shown = why ? why : "dlopen failed";
    // The box's folders are the runner's business, not the message's.
    std::string text = shown;
    for (size_t at; (at = text.find(g_dir + "/")) != std::string::npos;) text.erase(at, g_dir.size() + 1);
    PyErr_SetString(PyExc_RuntimeError, ("the load_inline extension built by kernelgate does not load: " + text).c_str());
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_handles.push_back(handle);
  Py_RETURN_TRUE;
}

PyObject* request(PyObject*, PyObject* arg) {
  if (!PyTuple_Check(arg) || PyTuple_GET_SIZE(arg) != static_cast<Py_ssize_t>(protocol::kInlineExtensionFields)) {
    PyErr_SetString(PyExc_TypeError, "kernelgate: an extension request is a tuple of its eight fields");
    return nullptr;
  }
  std::vector<std::string> fields;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(arg); ++i) {
    Py_ssize_t n = 0;
    PyObject* item = PyTuple_GET_ITEM(arg, i);
    const char* text = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &n) : nullptr;
    if (!text) {
      PyErr_Clear();
      PyErr_SetString(PyExc_TypeError, "kernelgate: an extension request's fields are text");
      return nullptr;
    }
    fields.emplace_back(text, static_cast<size_t>(n));
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_take_requests) Py_RETURN_FALSE;
  for (const auto& r : g_requests)
    if (r == fields) Py_RETURN_TRUE;
  if (g_requests.size() >= protocol::kMaxInlineExtensions) {
    PyErr_Format(PyExc_RuntimeError, "kernelgate: more than %d load_inline extensions in one source", int(protocol::kMaxInlineExtensions));
    return nullptr;
  }
  g_requests.push_back(std::move(fields));
  Py_RETURN_TRUE;
}

PyMethodDef g_load_def = {"kg_load_extension", load, METH_O, nullptr};
PyMethodDef g_request_def = {"kg_request_extension", request, METH_O, nullptr};

at::Tensor bytes_tensor(const std::string& s) {
  at::Tensor t = at::empty({static_cast<int64_t>(s.size())}, at::kByte);
  if (!s.empty()) std::memcpy(t.data_ptr<uint8_t>(), s.data(), s.size());
  return t;
}

}  // namespace

void set_inline_extension_source(const std::string& source_path, bool take_requests) {
  std::lock_guard<std::mutex> lock(g_mu);
  const size_t slash = source_path.rfind('/');
  g_dir = slash == std::string::npos ? "." : source_path.substr(0, slash);
  g_take_requests = take_requests;
}

PyRef inline_extension_load_function() { return PyRef::steal(PyCFunction_New(&g_load_def, nullptr)); }
PyRef inline_extension_request_function() { return PyRef::steal(PyCFunction_New(&g_request_def, nullptr)); }

std::vector<at::Tensor> inline_extension_requests() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<at::Tensor> out = {at::full({1}, static_cast<int64_t>(g_requests.size()), at::kLong)};
  for (const auto& r : g_requests)
    for (const auto& f : r) out.push_back(bytes_tensor(f));
  return out;
}

}  // namespace kg::runner::python

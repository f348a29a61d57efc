// The python kind's audit hook (PEP 578): see interpreter.h. Defence in depth: the run profile's
// seccomp filter kills the runner for a process, a socket or a file opened for writing anyway;
// refused here, the kernel gets a Python exception naming the event instead, and ctypes, which
// the filter cannot see (it calls native code in-process), is refused outright.
#include "interpreter.h"

#include <Python.h>

#include <fcntl.h>

#include <atomic>
#include <cstring>

namespace kg::runner::python {
namespace {

std::atomic<bool> g_armed{false};

bool starts_with(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

// Modules whose only use in a kernel would be reaching native code or the outside.
bool refused_module(PyObject* name) {
  if (!name || !PyUnicode_Check(name)) return false;
  const char* n = PyUnicode_AsUTF8(name);
  if (!n) {
    PyErr_Clear();
    return false;
  }
  for (const char* m : {"ctypes", "_ctypes", "cffi", "_cffi_backend", "subprocess", "_posixsubprocess", "socket", "_socket",
                        "multiprocessing", "_multiprocessing"})
    if (std::strcmp(n, m) == 0 || (starts_with(n, m) && n[std::strlen(m)] == '.')) return true;
  return false;
}

// "open" events carry (path, mode, flags): flags that write or create are refused.
bool opens_for_writing(PyObject* args) {
  if (!args || !PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 3) return false;
  PyObject* flags = PyTuple_GET_ITEM(args, 2);
  if (!PyLong_Check(flags)) return false;
  const long f = PyLong_AsLong(flags);
  if (f == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return true;
  }
  return (f & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)) != 0;
}

bool refused(const char* event, PyObject* args) {
  if (starts_with(event, "ctypes.") || starts_with(event, "socket.") || starts_with(event, "subprocess.")) return true;
  for (const char* e : {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill", "os.killpg", "pty.spawn"})
    if (std::strcmp(event, e) == 0) return true;
  if (std::strcmp(event, "import") == 0)
    return args && PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 0 && refused_module(PyTuple_GET_ITEM(args, 0));
  if (std::strcmp(event, "open") == 0) return opens_for_writing(args);
  return false;
}

int hook(const char* event, PyObject* args, void*) {
  if (!g_armed.load(std::memory_order_relaxed) || !refused(event, args)) return 0;
  PyErr_Format(PyExc_PermissionError, "kernelgate: '%s' is not allowed in a python kernel (audit event refused)", event);
  return -1;
}

}  // namespace

void install_audit_hook() { PySys_AddAuditHook(hook, nullptr); }
void arm_audit_hook() { g_armed.store(true, std::memory_order_relaxed); }

}  // namespace kg::runner::python

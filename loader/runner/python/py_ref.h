// Owning references to Python objects and the GIL, as RAII.
#pragma once

#include <Python.h>

#include <utility>

namespace kg::runner::python {

// One strong reference; released (under the GIL the caller holds) when the owner goes.
class PyRef {
 public:
  PyRef() = default;
  // Takes over a new reference (nullptr allowed: a failed call).
  static PyRef steal(PyObject* o) { return PyRef(o); }
  // Adds a reference to a borrowed one.
  static PyRef borrow(PyObject* o) {
    Py_XINCREF(o);
    return PyRef(o);
  }
  PyRef(PyRef&& o) noexcept : o_(std::exchange(o.o_, nullptr)) {}
  PyRef& operator=(PyRef&& o) noexcept {
    if (this != &o) {
      Py_XDECREF(o_);
      o_ = std::exchange(o.o_, nullptr);
    }
    return *this;
  }
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  ~PyRef() { Py_XDECREF(o_); }

  PyObject* get() const { return o_; }
  // Hands the reference to a function that steals it (PyTuple_SET_ITEM, PyList_SET_ITEM).
  PyObject* release() { return std::exchange(o_, nullptr); }
  explicit operator bool() const { return o_ != nullptr; }

 private:
  explicit PyRef(PyObject* o) : o_(o) {}
  PyObject* o_ = nullptr;
};

// Holds the GIL for its scope, from any thread (the interpreter's own or a kernel's worker).
class Gil {
 public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE state_;
};

}  // namespace kg::runner::python

// The calling thread's dispatch state kept across a call into submitted Python.
#pragma once

#include <ATen/ThreadLocalState.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>

#include <cstdint>

namespace kg::runner::python {

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

}  // namespace kg::runner::python

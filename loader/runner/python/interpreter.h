// The embedded interpreter of the python kind: started once per runner, before its filter tightens.
#pragma once

#include <string>

namespace kg::runner::python {

// Starts CPython with a fixed module path (the standard library and the folder holding the linked
// libtorch's `torch` package: no site, no .pth files, no user or environment settings, no bytecode
// written), imports torch and the modules kernels commonly use, takes the functions that would
// switch the runner's dispatcher observer off out of reach, and installs the audit hook
// (audit_hook.cc). With `cuda`, torch.cuda is initialised too (cuda:0 is set up by then), so that
// nothing of its start-up runs once the source does. Returns with the GIL released; "" or why not.
std::string start_interpreter(bool cuda);

// Called once (kg-runner keeps that: Runner::python_armed_), after start_interpreter and before
// the first source runs: with `triton` (a cuda runner) Triton is imported and runs on kernelgate's
// driver (triton_driver.h), otherwise `import triton` is refused with protocol::kTritonRefused;
// then the audit hook is armed. "" or why not.
std::string ready_for_sources(bool cuda, bool triton);

// The pending Python exception as text (its traceback, formatted by Python's traceback module),
// sanitised and cut to `cap` bytes keeping its end (the innermost frames and the message); the
// exception is cleared. The GIL must be held.
std::string take_exception(size_t cap);

// `text` as printable ASCII (newlines and tabs kept, anything else '?'), at most `cap` bytes: when
// longer, "[... N bytes cut]" and its last part.
std::string sanitise(const std::string& text, size_t cap);

// The audit hook (audit_hook.cc): refuses, with a Python exception, what a kernel never needs
// and what would reach past the interpreter: ctypes, spawning processes, sockets, opening files
// for writing. Installed before the interpreter starts (a hook installed from C cannot be
// removed from Python); it refuses only once armed, after kernelgate's own imports
// (ready_for_sources).
void install_audit_hook();
void arm_audit_hook();

}  // namespace kg::runner::python

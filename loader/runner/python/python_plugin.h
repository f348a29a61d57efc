// The interface between kg-runner and its python-kind plugin (libkg_runner_python.so), which embeds
// CPython and the machine's PyTorch. kg-runner loads the plugin only for a python artifact, so a
// runner of any other kind never maps libpython or libtorch_python. Plain C types: the two sides
// are built together, but the boundary stays a table of functions looked up once.
#pragma once

#include <cstddef>

extern "C" {

enum : int { kKgPythonStartCuda = 1, kKgPythonStartTriton = 2 };

struct KgPythonPlugin {
  unsigned version;  // kKgPythonPluginVersion
  // Before the runner's filter tightens: the interpreter, `import torch` and the modules kernels
  // commonly use, the audit hook; with `cuda` (the runner set cuda:0 up) torch.cuda's own
  // initialisation too (`flags` kKgPythonStartCuda). 0 on success, else why not in `error`.
  int (*start)(int flags, char* error, size_t error_size);
  // After it tightened: executes the source at `source_path` in a fresh module, finds the first of
  // `entries` it defines, and registers it as the dispatcher op `registered` ("kgsub::relu__default",
  // overload "") with the schema of the aten overload (`aten_name`, `aten_overload`). 0 on success,
  // else why not in `error` (a Python exception's traceback, truncated and sanitised).
  int (*load)(const char* source_path, const char* registered, const char* aten_name, const char* aten_overload, const char* const* entries,
              size_t n_entries, char* error, size_t error_size);
  // After it tightened: a KernelBench file. `solution` 0: a problem file (Model, get_inputs,
  // get_init_inputs): get_init_inputs() and Model(*them) under `seed`, the arguments written to
  // `init_out` as a Python literal. `solution` 1: ModelNew(*init) under `seed`, `init` being that
  // literal. With `cuda` the model is then moved to cuda:0 (`.cuda()`, as KernelBench's evaluation
  // does). Either is registered as the op `registered` with protocol::kModelSchemaArguments.
  // 0 on success, else why not in `error`.
  int (*load_model)(const char* source_path, const char* registered, int solution, unsigned long long seed, const char* init, int cuda,
                    char* init_out, size_t init_out_size, char* error, size_t error_size);
  // After it tightened: executes a python op source with its load_inline calls recorded (not
  // refused) and registers `registered` with protocol::kModelSchemaArguments, answering only
  // ModelAction::Extensions (protocol::kLoadListExtensions). 0 on success, else why not in `error`.
  int (*load_requests)(const char* source_path, const char* registered, char* error, size_t error_size);
  // After start, before the filter tightens and before the first source runs (once): with
  // kKgPythonStartTriton (and kKgPythonStartCuda) Triton is imported and put on kernelgate's driver
  // (interpreter.cc, "Triton"), for a source that names Triton; otherwise `import triton` is
  // refused with protocol::kTritonRefused. Then the audit hook is armed. 0 on success, else why not.
  int (*arm)(int flags, char* error, size_t error_size);
};

// Exported by the plugin.
const KgPythonPlugin* kg_python_plugin();
}

inline constexpr unsigned kKgPythonPluginVersion = 5;
inline constexpr const char* kKgPythonPluginFile = "libkg_runner_python.so";

// The plugin's functions (python_plugin.h's table, plugin.cc) and what they share.
#pragma once

#include <torch/library.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace kg::runner::python {

// What the plugin registered: the dispatcher keeps the kernels while these live. Never
// destroyed: at exit the interpreter may no longer take the references back.
std::vector<std::unique_ptr<torch::Library>>& libraries();

// `e`, sanitised, into the caller's buffer of `size` bytes.
void copy_error(const std::string& e, char* error, size_t size);

int plugin_start(int cuda, char* error, size_t size);
// python_op.cc
int plugin_load(const char* source_path, const char* registered, const char* aten_name, const char* aten_overload,
                const char* const* entries, size_t n_entries, char* error, size_t size);
// python_model.cc
int plugin_load_requests(const char* source_path, const char* registered, char* error, size_t size);
int plugin_load_model(const char* source_path, const char* registered, int solution, unsigned long long seed, const char* init, int cuda,
                      char* init_out, size_t init_out_size, char* error, size_t error_size);

}  // namespace kg::runner::python

// The files the evaluating commands write (results.json, audit.md, audit.json, the feedback file):
// written whole or not at all, and a previous run's removed before a new run starts, so a reader
// never takes stale or partial output for the current run's.
#pragma once

#include <string>

namespace kg::cli {

// Writes `text` to a temporary file in the folder of `path`, fsyncs it, renames it over `path`
// and fsyncs the folder. On failure the temporary file is removed, `path` is left as it was, and
// std::runtime_error says "PATH: cannot write (STEP): <strerror> (<ERRNO>)" (kg::results::write_atomically).
void write_file_atomically(const std::string& path, const std::string& text);

// Removes `path` (a previous run's output) if it exists; std::runtime_error naming the path and
// the errno when it exists and cannot be removed.
void remove_previous_output(const std::string& path);

}  // namespace kg::cli

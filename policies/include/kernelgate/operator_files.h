// Reading a file the operator names (a policy, a trace) in the unsandboxed supervisor, without
// letting it be /dev/zero, a FIFO or a multi-GiB file: the checks are made on the open
// descriptor (O_NONBLOCK, so opening a FIFO never waits for a writer) and the bytes are read from
// that same descriptor, never past the limit, even for a file that grows while it is read.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kg::policy {

// "a FIFO", "a character device", "a directory", ... for the S_IFMT bits of `mode`.
const char* file_kind(unsigned mode);

// The whole text of the regular file at `path` (symbolic links followed: the operator chose the
// path), at most `max_bytes`. Throws std::runtime_error "PATH: cannot read WHAT: why" ("is a
// FIFO, not a regular file", "is N bytes, over the limit of M bytes for a WHAT", errno text).
std::string read_operator_file(const std::string& path, uint64_t max_bytes, const std::string& what);

}  // namespace kg::policy

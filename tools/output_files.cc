#include "output_files.h"

#include "kernelgate/results.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace kg::cli {
namespace {

std::string errno_text(int err) {
  const char* name = ::strerrorname_np(err);
  return std::string(std::strerror(err)) + " (" + (name ? name : std::to_string(err)) + ")";
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) { results::write_atomically(path, text); }

void remove_previous_output(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw std::runtime_error(path + ": cannot remove the previous run's file: " + errno_text(errno));
}

}  // namespace kg::cli

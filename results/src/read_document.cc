// Reading back a JSON document kernelgate wrote (results.h read_document).
#include "kernelgate/results.h"
#include "kernelgate/unique_fd.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace kg::results {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) { throw std::runtime_error(path + ": " + problem); }

std::string read_regular_file(const std::string& path) {
  // O_NONBLOCK: a FIFO put where a document belongs must not hang the open; it is refused below.
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail(path, std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(path, "not a regular file");
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace

json read_document(const std::string& path) {
  const std::string text = read_regular_file(path);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann's text starts "[json.exception.parse_error.101] parse error at line 1, column 5: ";
    // keep what follows, the problem itself.
    std::string what = e.what();
    const size_t colon = what.find(": ", what.find("parse error"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    fail(path, "not JSON at byte " + std::to_string(e.byte) + ": " + what);
  }
  if (!doc.is_object()) fail(path, std::string("not a JSON object (got ") + doc.type_name() + ")");
  return doc;
}

}  // namespace kg::results

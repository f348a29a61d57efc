// The daemon's wire format: a 4-byte length with the descriptors attached, then the body, a
// sequence of length-prefixed strings: magic, cwd, argc, argv..., env...; the reply is one line,
// "ran STATUS" or "declined WHY".
#include "daemon_protocol.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>

namespace kg::daemon {
namespace {

constexpr const char* kMagic = "kernelgate-daemon-1";
constexpr uint32_t kMaxBody = 4u << 20;
constexpr size_t kMaxFds = 3;

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw std::runtime_error(errno_text("daemon socket: send"));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// False on end of file before the first byte; throws on a short read after it.
bool read_all(int fd, char* p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::recv(fd, p + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw std::runtime_error(errno_text("daemon socket: recv"));
    if (r == 0) {
      if (got == 0) return false;
      throw std::runtime_error("daemon socket: the message ended early");
    }
    got += static_cast<size_t>(r);
  }
  return true;
}

void put_string(std::string* out, const std::string& s) {
  uint32_t n = static_cast<uint32_t>(s.size());
  out->append(reinterpret_cast<const char*>(&n), sizeof n);
  out->append(s);
}

std::string take_string(const std::string& body, size_t* at) {
  uint32_t n = 0;
  if (body.size() - *at < sizeof n) throw std::runtime_error("daemon request: truncated");
  std::memcpy(&n, body.data() + *at, sizeof n);
  *at += sizeof n;
  if (body.size() - *at < n) throw std::runtime_error("daemon request: truncated");
  std::string s = body.substr(*at, n);
  *at += n;
  return s;
}

std::map<std::string, std::string> shaping(const std::vector<std::string>& env) {
  std::map<std::string, std::string> m;
  for (const auto& kv : env) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string name = kv.substr(0, eq);
    if (shapes_the_worker(name)) m[name] = kv.substr(eq + 1);
  }
  return m;
}

}  // namespace

bool unix_address(const std::string& path, sockaddr_un* addr, std::string* why) {
  *addr = sockaddr_un{};
  if (path.size() >= sizeof addr->sun_path) {
    *why = path + ": socket path too long";
    return false;
  }
  addr->sun_family = AF_UNIX;
  std::memcpy(addr->sun_path, path.data(), path.size());
  return true;
}

UniqueFd connect_to(const std::string& path, std::string* why) {
  sockaddr_un addr;
  if (!unix_address(path, &addr, why)) return {};
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) {
    *why = errno_text("socket");
    return {};
  }
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    *why = path + ": " + std::strerror(errno);
    return {};
  }
  return fd;
}

void send_request(int fd, const Request& r, const std::vector<int>& fds) {
  std::string body;
  put_string(&body, kMagic);
  put_string(&body, r.cwd);
  put_string(&body, std::to_string(r.argv.size()));
  for (const auto& a : r.argv) put_string(&body, a);
  for (const auto& e : r.env) put_string(&body, e);
  if (body.size() > kMaxBody) throw std::runtime_error("daemon request: command line and environment exceed 4 MiB");
  if (fds.size() > kMaxFds) throw std::invalid_argument("daemon request: at most 3 descriptors");
  uint32_t n = static_cast<uint32_t>(body.size());
  iovec iov{&n, sizeof n};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t w;
  do w = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  if (w != static_cast<ssize_t>(sizeof n)) throw std::runtime_error(errno_text("daemon socket: sendmsg"));
  write_all(fd, body.data(), body.size());
}

Request receive_request(int fd, std::vector<UniqueFd>* fds) {
  uint32_t n = 0;
  iovec iov{&n, sizeof n};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t r;
  do r = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  while (r < 0 && errno == EINTR);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int d;
      std::memcpy(&d, CMSG_DATA(c) + i * sizeof(int), sizeof d);
      fds->emplace_back(d);
    }
  }
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) throw std::runtime_error("daemon request: nothing came within the time allowed");
  if (r != static_cast<ssize_t>(sizeof n)) throw std::runtime_error("daemon request: no length word");
  if (msg.msg_flags & MSG_CTRUNC) throw std::runtime_error("daemon request: more than 3 descriptors");
  if (n > kMaxBody) throw std::runtime_error("daemon request: " + std::to_string(n) + " bytes, over the 4 MiB limit");
  std::string body(n, '\0');
  if (n > 0 && !read_all(fd, body.data(), n)) throw std::runtime_error("daemon request: the body never came");
  size_t at = 0;
  if (take_string(body, &at) != kMagic) throw std::runtime_error("daemon request: not from this version of kernelgate");
  Request req;
  req.cwd = take_string(body, &at);
  const std::string argc_text = take_string(body, &at);
  size_t argc = 0;
  try {
    argc = std::stoul(argc_text);
  } catch (const std::exception&) { throw std::runtime_error("daemon request: argument count '" + argc_text + "' is not a number"); }
  if (argc == 0 || argc > 65536) throw std::runtime_error("daemon request: argument count " + argc_text + " out of range");
  for (size_t i = 0; i < argc; ++i) req.argv.push_back(take_string(body, &at));
  while (at < body.size()) req.env.push_back(take_string(body, &at));
  return req;
}

void send_reply(int fd, const Reply& r) {
  std::string line = r.ran ? "ran " + std::to_string(r.status) : "declined " + r.declined;
  for (char& c : line)
    if (c == '\n') c = ' ';
  line += '\n';
  write_all(fd, line.data(), line.size());
}

std::optional<Reply> receive_reply(int fd) {
  std::string line;
  char c;
  while (line.size() < 65536) {
    ssize_t r = ::recv(fd, &c, 1, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    if (c == '\n') {
      Reply reply;
      if (line.rfind("ran ", 0) == 0) {
        reply.ran = true;
        reply.status = std::atoi(line.c_str() + 4);
      } else if (line.rfind("declined ", 0) == 0) {
        reply.declined = line.substr(9);
      } else {
        return std::nullopt;
      }
      return reply;
    }
    line += c;
  }
  return std::nullopt;
}

bool shapes_the_worker(const std::string& name) {
  if (name == kSocketVariable) return false;
  // Read by libtorch, the CUDA libraries, OpenMP, the allocator or the loader while the worker
  // started, before any request: a caller that sets them otherwise would not get what it asked for.
  for (const char* prefix : {"KERNELGATE_", "CUDA_", "NVIDIA_", "TORCH_", "PYTORCH_", "ATEN_", "OMP_", "GOMP_", "KMP_", "MKL_", "CUBLAS",
                             "CUDNN_", "NCCL_", "MALLOC_", "LD_"})
    if (name.rfind(prefix, 0) == 0) return true;
  return name == "PATH" || name == "TMPDIR" || name == "HOME" || name == "XDG_CACHE_HOME" || name == "GLIBC_TUNABLES";
}

std::string first_difference(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  auto ma = shaping(a), mb = shaping(b);
  for (const auto& [name, value] : ma) {
    auto it = mb.find(name);
    if (it == mb.end() || it->second != value) return name;
  }
  for (const auto& [name, value] : mb)
    if (!ma.count(name)) return name;
  return "";
}

}  // namespace kg::daemon

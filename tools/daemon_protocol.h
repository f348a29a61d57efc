// What `kernelgate` (the launcher) and `kernelgate daemon` say over the daemon's Unix socket: one
// request (the command line, the working directory, the environment, and the caller's stdin,
// stdout and stderr passed as file descriptors), then one reply line. Neither side links libtorch
// for it: the launcher's whole point is to start in milliseconds.
#pragma once

#include "kernelgate/unique_fd.h"

#include <sys/un.h>

#include <optional>
#include <string>
#include <vector>

namespace kg::daemon {

// The environment variable that names the daemon's socket to `kernelgate eval`.
inline constexpr const char* kSocketVariable = "KERNELGATE_DAEMON";

struct Request {
  std::string cwd;
  std::vector<std::string> argv;  // argv[0] is the program as the caller named it
  std::vector<std::string> env;   // NAME=VALUE
};

// The reply: the command's exit status once it has run in a worker, or why the daemon would not
// run it (the caller then runs it itself).
struct Reply {
  bool ran = false;
  int status = 0;
  std::string declined;  // why not, when !ran
};

// `path` as a Unix socket address; false, with `*why` set, when it is too long for one.
bool unix_address(const std::string& path, sockaddr_un* addr, std::string* why);

// A connection to the socket at `path`; an empty UniqueFd with `*why` set when there is none.
UniqueFd connect_to(const std::string& path, std::string* why);

// Sends `r` with the descriptors `fds` (the caller's 0, 1, 2). Throws std::runtime_error.
void send_request(int fd, const Request& r, const std::vector<int>& fds);
// Reads one request and the descriptors that came with it (owned by the caller). Throws
// std::runtime_error on a malformed or oversized request or a short read.
Request receive_request(int fd, std::vector<UniqueFd>* fds);

void send_reply(int fd, const Reply& r);
// nullopt when the connection closed with no reply (the worker died).
std::optional<Reply> receive_reply(int fd);

// The variables whose values decided what a worker set up before its request (libtorch's start,
// the runners started ahead): KERNELGATE_* (but the socket's own), CUDA_*, NVIDIA_*, TORCH_*,
// PYTORCH_*, ATEN_*, OMP_*, GOMP_*, KMP_*, MKL_*, CUBLAS*, CUDNN_*, NCCL_*, MALLOC_*, LD_*,
// GLIBC_TUNABLES, PATH, TMPDIR, HOME, XDG_CACHE_HOME.
bool shapes_the_worker(const std::string& name);
// The first such variable whose value differs between the two environments (absent counts as a
// value), "" when none does.
std::string first_difference(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace kg::daemon

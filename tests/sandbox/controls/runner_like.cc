// Benign control for run-cpu shaped like kg-runner (without libtorch): fd 3 is a socket the
// supervisor passed; dlopen a .so from a read-only bind (argv[1]), start threads, install the
// second-stage filter, call into the .so, send the answer over fd 3 with sendmsg, read a reply.
// Must finish OK with an empty violation.
#include <dlfcn.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "kernelgate/sandbox.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::thread warm([] {});
  warm.join();
  std::string err = kg::sandbox::tighten_runner_filter(kg::sandbox::Profile::RunCpu);
  if (!err.empty()) {
    std::fprintf(stderr, "tighten: %s\n", err.c_str());
    return 3;
  }
  // After tightening: the artifact is loaded (read-only opens stay allowed) and called.
  void* h = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 4;
  }
  auto fn = reinterpret_cast<int (*)(int)>(::dlsym(h, "kg_plugin_square"));
  int v = 0;
  std::thread t([&] { v = fn(7); });
  t.join();
  char msg[32];
  int n = std::snprintf(msg, sizeof msg, "answer %d", v);
  iovec iov{msg, static_cast<size_t>(n)};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (::sendmsg(3, &mh, 0) != n) return 5;
  char reply[16] = {};
  if (::recv(3, reply, sizeof reply - 1, 0) <= 0) return 6;
  std::printf("got %s\n", reply);
  return std::strcmp(reply, "thanks") == 0 ? 0 : 7;
}

// `kernelgate` itself: a launcher that links neither libtorch nor anything that does, so that it
// starts in about a millisecond. `kernelgate eval` with KERNELGATE_DAEMON naming a running
// `kernelgate daemon`'s socket is run by one of that daemon's workers, which already paid
// libtorch's start-up and started its runners; everything else (and an eval the daemon cannot
// take) runs `kernelgate-main`, beside this file, in this same process.
#include "daemon_protocol.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace {

void note(const std::string& text) { std::fprintf(stderr, "kernelgate: %s\n", text.c_str()); }

// The caller's stdin, stdout and stderr, with /dev/null in place of any that is closed.
std::vector<kg::UniqueFd> standard_streams() {
  std::vector<kg::UniqueFd> fds;
  for (int i = 0; i < 3; ++i) {
    int d = ::fcntl(i, F_GETFD) >= 0 ? ::fcntl(i, F_DUPFD_CLOEXEC, 3) : ::open("/dev/null", O_RDWR | O_CLOEXEC);
    fds.emplace_back(d);
  }
  return fds;
}

// The exit status when the daemon ran the command; nullopt when this process is to run it.
std::optional<int> through_daemon(const char* socket_path, int argc, char** argv) {
  std::string why;
  kg::UniqueFd conn = kg::daemon::connect_to(socket_path, &why);
  if (!conn) {
    note("no daemon at " + why + " (" + kg::daemon::kSocketVariable + "); evaluating in this process");
    return std::nullopt;
  }
  kg::daemon::Request req;
  char cwd[PATH_MAX];
  if (!::getcwd(cwd, sizeof cwd)) {
    note(std::string("cannot name the working directory for the daemon: ") + std::strerror(errno) + "; evaluating in this process");
    return std::nullopt;
  }
  req.cwd = cwd;
  for (int i = 0; i < argc; ++i) req.argv.emplace_back(argv[i]);
  for (char** e = environ; *e; ++e) req.env.emplace_back(*e);
  std::vector<kg::UniqueFd> streams = standard_streams();
  try {
    std::vector<int> fds;
    for (const auto& s : streams) fds.push_back(s.get());
    kg::daemon::send_request(conn.get(), req, fds);
  } catch (const std::exception& e) {
    note(std::string(e.what()) + "; evaluating in this process");
    return std::nullopt;
  }
  streams.clear();
  auto reply = kg::daemon::receive_reply(conn.get());
  if (!reply) {
    note("the daemon's worker ended without an exit status (see the daemon's log)");
    return 2;
  }
  if (reply->ran) return reply->status;
  note("the daemon declined: " + reply->declined + "; evaluating in this process");
  return std::nullopt;
}

[[noreturn]] void run_main(char** argv) {
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string main_path = "kernelgate-main";
  if (n > 0) {
    self[n] = '\0';
    std::string dir(self);
    main_path = dir.substr(0, dir.rfind('/') + 1) + "kernelgate-main";
  }
  ::execv(main_path.c_str(), argv);
  note("cannot run " + main_path + ": " + std::strerror(errno));
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && !std::strcmp(argv[1], "eval")) {
    const char* socket_path = std::getenv(kg::daemon::kSocketVariable);
    if (socket_path && *socket_path)
      if (auto status = through_daemon(socket_path, argc, argv)) return *status;
  }
  run_main(argv);
}

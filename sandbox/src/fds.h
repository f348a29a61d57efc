// fds: which descriptors the payload keeps, and passing descriptors over a unix socket.
#pragma once

#include <vector>

#include "util.h"

namespace kg::sandbox::fds {

// Child side, no allocation. Moves the payload's descriptors into place:
//   0 <- stdin_fd, 1 <- stdout_fd, 2 <- stderr_fd, 3.. <- pass[0..n), then `extra` (close-on-exec
//   or not as given) right after, and closes every other descriptor.
// Returns the new numbers of the extras through `extra` (in place). On failure fills `report`.
struct Extra {
  int fd;
  bool cloexec;
};
bool arrange(int stdin_fd, int stdout_fd, int stderr_fd, const int* pass, int npass, Extra* extra, int nextra, Report* report);

// Closes every fd >= `from` except `keep` (child side).
void close_from(int from, const int* keep, int nkeep);

// SCM_RIGHTS send (child side, no allocation) / receive (supervisor; -1 when nothing came).
bool send_fd(int sock, int fd);
int recv_fd(int sock);

}  // namespace kg::sandbox::fds

// Channel: see channel.h.
#include "channel.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace kg::runner {

bool Channel::send_bytes(const void* p, size_t n) const { return ::send(fd_.get(), p, n, MSG_NOSIGNAL) == static_cast<ssize_t>(n); }

ssize_t Channel::receive(void* buf, size_t cap, UniqueFd* passed) const {
  iovec iov{buf, cap};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))];
  mh.msg_control = ctrl;
  mh.msg_controllen = sizeof ctrl;
  *passed = UniqueFd();
  const ssize_t n = ::recvmsg(fd_.get(), &mh, MSG_CMSG_CLOEXEC);
  if (n <= 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
      *passed = UniqueFd(fd);
    }
  return n;
}

void set_message(char* dst, size_t cap, const std::string& s) {
  const size_t n = std::min(cap - 1, s.size());
  std::memcpy(dst, s.data(), n);
  dst[n] = 0;
}

}  // namespace kg::runner

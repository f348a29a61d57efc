// The runner's end of the control channel (protocol.h): a SOCK_SEQPACKET socket, fd 3 unless
// --fd says otherwise. Every message is one fixed-size struct; a Call carries the memfd of its
// region.
#pragma once

#include "kernelgate/unique_fd.h"

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace kg::runner {

class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) {}
  int fd() const { return fd_.get(); }
  // Sends one message; false when the supervisor is gone.
  template <typename Msg>
  bool send(const Msg& m) const {
    return send_bytes(&m, sizeof m);
  }
  // Receives one message into `buf` and the descriptor it carries, if any, into `*passed`.
  // Returns the message's length; <= 0 when the supervisor is gone.
  ssize_t receive(void* buf, size_t cap, UniqueFd* passed) const;

 private:
  bool send_bytes(const void* p, size_t n) const;
  UniqueFd fd_;
};

// Writes `s` into a message's text field of `cap` bytes, cut to fit, NUL-terminated.
void set_message(char* dst, size_t cap, const std::string& s);

}  // namespace kg::runner

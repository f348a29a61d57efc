// A4 network. Modes (argv[1]):
//   tcp, tcp6, udp, netlink, vsock, packet   socket() of that family (outside every profile)
//   abstract NAME                             AF_UNIX connect to the abstract name "\0NAME", which
//                                             the test listens on in the host's network namespace
//   path PATH                                 AF_UNIX connect to a host socket file (not bound)
//   loopback                                  AF_UNIX is all there is; also report lo's state
// Exit 0 when the attempt failed with an errno, kBreached when it connected.
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/vm_sockets.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "attack.h"

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  std::string mode = argc > 1 ? argv[1] : "tcp";
  if (mode == "tcp" || mode == "tcp6" || mode == "udp") {
    int fam = mode == "tcp6" ? AF_INET6 : AF_INET;
    int s = ::socket(fam, mode == "udp" ? SOCK_DGRAM : SOCK_STREAM, 0);
    if (!refused("socket " + mode, s)) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(53);
      a.sin_addr.s_addr = htonl(0x08080808);
      if (!refused("connect 8.8.8.8:53", ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a))) return kBreached;
    }
    return 0;
  }
  if (mode == "netlink") return refused("socket netlink", ::socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)) ? 0 : kBreached;
  if (mode == "vsock") {
    int s = ::socket(AF_VSOCK, SOCK_STREAM, 0);
    if (refused("socket vsock", s)) return 0;
    sockaddr_vm a{};
    a.svm_family = AF_VSOCK;
    a.svm_cid = VMADDR_CID_HOST;
    a.svm_port = 22;
    return refused("connect vsock host", ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a)) ? 0 : kBreached;
  }
  if (mode == "packet") return refused("socket packet", ::socket(AF_PACKET, SOCK_RAW, 0)) ? 0 : kBreached;
  if (mode == "abstract" || mode == "path") {
    int s = ::socket(AF_UNIX, SOCK_STREAM, 0);  // allowed: the box's own unix sockets
    if (s < 0) return 0;
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::string name = argc > 2 ? argv[2] : "kg-nothing";
    socklen_t len;
    if (mode == "abstract") {
      std::memcpy(a.sun_path + 1, name.data(), name.size());
      len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    } else {
      std::strncpy(a.sun_path, name.c_str(), sizeof a.sun_path - 1);
      len = sizeof a;
    }
    return refused("connect unix " + mode + " " + name, ::connect(s, reinterpret_cast<sockaddr*>(&a), len)) ? 0 : kBreached;
  }
  result("mode", "unknown");
  return 2;
}

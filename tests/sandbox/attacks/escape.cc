// A10 escape attempts. Modes (each is outside every profile: the record must be SV naming it):
//   unshare          unshare(CLONE_NEWUSER | CLONE_NEWNS)          -> unshare
//   setns            setns on /proc/1/ns/mnt                        -> setns (or open refused first)
//   mount            mount a tmpfs over /usr                        -> mount
//   remount          remount / read-write                           -> mount
//   chroot           chroot("/tmp")                                 -> chroot
//   pivot_root       pivot_root("/tmp", "/tmp")                     -> pivot_root
//   umount           umount2("/proc", MNT_DETACH)                   -> umount2
//   clone_newuser    clone(CLONE_NEWUSER | SIGCHLD)                 -> clone
//   clone_newns_high clone with CLONE_NEWNS plus high junk bits     -> clone
//   exec_shell       execve("/bin/sh") (run with --tighten: the runner's second stage kills it)
//   open_write       (with --tighten) open a scratch file for writing -> killed
//   socketpair       (with --tighten) socketpair(AF_UNIX)           -> killed
//   thread           (with --tighten) a plain thread must still work: exits 0
#include <csignal>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attack.h"

static void* nothing(void*) { return nullptr; }

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  std::string m = argc > 1 ? argv[1] : "unshare";
  long rc = 0;
  if (m == "unshare") rc = ::unshare(CLONE_NEWUSER | CLONE_NEWNS);
  else if (m == "setns") {
    int fd = ::open("/proc/1/ns/mnt", O_RDONLY);
    if (fd < 0) fd = ::open("/proc/self/ns/mnt", O_RDONLY);
    rc = ::setns(fd, 0);
  } else if (m == "mount") rc = ::mount("none", "/usr", "tmpfs", 0, nullptr);
  else if (m == "remount") rc = ::mount(nullptr, "/", nullptr, MS_REMOUNT, nullptr);
  else if (m == "chroot") rc = ::chroot("/tmp");
  else if (m == "pivot_root") rc = ::syscall(SYS_pivot_root, "/tmp", "/tmp");
  else if (m == "umount") rc = ::umount2("/proc", MNT_DETACH);
  else if (m == "clone_newuser") {
    rc = ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, 0);
    if (rc == 0) _exit(0);
  } else if (m == "clone_newns_high") {
    rc = ::syscall(SYS_clone, 0xff00000000000000ULL | CLONE_NEWNS | SIGCHLD, nullptr, nullptr, nullptr, 0);
    if (rc == 0) _exit(0);
  } else if (m == "exec_shell") {
    char* args[] = {const_cast<char*>("/bin/sh"), const_cast<char*>("-c"), const_cast<char*>("echo shell"), nullptr};
    rc = ::execve("/bin/sh", args, nullptr);
  } else if (m == "open_write") rc = ::open("/tmp/new", O_CREAT | O_WRONLY, 0600);
  else if (m == "socketpair") {
    int sv[2];
    rc = ::socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
  } else if (m == "thread") {
    pthread_t t;
    if (pthread_create(&t, nullptr, nothing, nullptr) != 0) return 1;
    pthread_join(t, nullptr);
    result("thread", "created and joined");
    return 0;
  } else {
    return 2;
  }
  return refused(m, rc) ? 0 : kBreached;
}

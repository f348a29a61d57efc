// An owning libseccomp context: the filters of the profiles (seccomp.cc) and kg-runner's second
// stage (runner_filter.cc) are built with it and exported as BPF.
#pragma once

#include <linux/filter.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "util.h"

namespace kg::sandbox::seccomp {

class Ctx {
 public:
  explicit Ctx(uint32_t def_action) : ctx_(seccomp_init(def_action)) {
    if (!ctx_) throw std::runtime_error("kernelgate sandbox: seccomp_init failed");
    // Other ABIs of this CPU (i386 via int 0x80, x32) are not in the filter: any syscall made
    // through them kills the process. libseccomp's x86_64 filter also sends x32 numbers here.
    check(seccomp_attr_set(ctx_, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS), "attr badarch");
    // We set no_new_privs ourselves before installing.
    check(seccomp_attr_set(ctx_, SCMP_FLTATR_CTL_NNP, 0), "attr nnp");
  }
  ~Ctx() { seccomp_release(ctx_); }
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;
  scmp_filter_ctx get() const { return ctx_; }

  static void check(int rc, const std::string& what) {
    if (rc < 0) throw std::runtime_error("kernelgate sandbox: libseccomp " + what + ": " + std::strerror(-rc));
  }

  // Unconditional rule by name; names this libseccomp or kernel does not know are skipped.
  void add(uint32_t action, const char* name) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return;
    check(seccomp_rule_add(ctx_, action, nr, 0), std::string("rule ") + name);
  }
  void add(uint32_t action, const char* name, scmp_arg_cmp cmp) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return;
    check(seccomp_rule_add(ctx_, action, nr, 1, cmp), std::string("rule ") + name);
  }
  void allow(const char* name) { add(SCMP_ACT_ALLOW, name); }
  void allow_if(const char* name, scmp_arg_cmp cmp) { add(SCMP_ACT_ALLOW, name, cmp); }

  std::vector<sock_filter> export_bpf() const {
    UniqueFd mem(static_cast<int>(::syscall(SYS_memfd_create, "kg-bpf", MFD_CLOEXEC)));
    if (!mem) throw_errno("memfd_create");
    check(seccomp_export_bpf(ctx_, mem.get()), "export_bpf");
    off_t size = ::lseek(mem.get(), 0, SEEK_END);
    if (size < 0 || size % sizeof(sock_filter) != 0) throw_errno("lseek bpf");
    std::vector<sock_filter> out(size / sizeof(sock_filter));
    if (::pread(mem.get(), out.data(), size, 0) != size) throw_errno("pread bpf");
    return out;
  }

 private:
  scmp_filter_ctx ctx_;
};

}  // namespace kg::sandbox::seccomp

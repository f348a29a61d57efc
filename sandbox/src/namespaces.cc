// namespaces: clone flags and id maps.
#include "namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <string>
#include <unistd.h>

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

namespace kg::sandbox::namespaces {
namespace {

void write_file(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) throw_errno("open " + path);
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) throw_errno("write " + path);
}

}  // namespace

unsigned long clone_flags(bool user_ns) {
  unsigned long f = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  if (user_ns) f |= CLONE_NEWUSER;
  return f;
}

bool need_user_ns() { return ::geteuid() != 0; }

void write_id_maps(pid_t child, uid_t uid, gid_t gid) {
  std::string base = "/proc/" + std::to_string(child);
  write_file(base + "/uid_map", "0 " + std::to_string(uid) + " 1\n");
  write_file(base + "/setgroups", "deny");
  write_file(base + "/gid_map", "0 " + std::to_string(gid) + " 1\n");
}

bool setup_uts(Report* report) {
  static const char kName[] = "kernelgate";
  if (::sethostname(kName, sizeof kName - 1) != 0 || ::setdomainname(kName, sizeof kName - 1) != 0) {
    report->kind = ReportKind::SetupFailed;
    report->err = errno;
    child_append(report->what, sizeof report->what, "sethostname");
    return false;
  }
  return true;
}

}  // namespace kg::sandbox::namespaces

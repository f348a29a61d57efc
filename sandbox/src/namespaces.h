// namespaces: which namespaces the box gets and the user-namespace id maps.
#pragma once

#include <sys/types.h>

#include "util.h"

namespace kg::sandbox::namespaces {

// clone() flags: new mount, pid, net, ipc, uts and cgroup namespaces, plus a user namespace
// when the supervisor is not root (then the box's uid 0 maps to the supervisor's uid).
unsigned long clone_flags(bool user_ns);

// Whether a user namespace is needed (not running as root with CAP_SYS_ADMIN).
bool need_user_ns();

// Supervisor side: maps uid/gid 0 inside to `uid`/`gid` outside (and denies setgroups).
// Throws on failure.
void write_id_maps(pid_t child, uid_t uid, gid_t gid);

// Child side: hostname and domainname of the new UTS namespace; loopback stays down (the new
// network namespace has no other interface, so nothing can leave).
bool setup_uts(Report* report);

}  // namespace kg::sandbox::namespaces

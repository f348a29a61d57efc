// A2 writes outside the scratch: for every path in argv, try every way of changing it or its
// directory: create, open for writing, truncate, append, unlink, rename, chmod, utimes, hard link
// and symlink next to it, mkdir beside it, and the same through /proc/self/root. Any success is a
// breach. Paths are host paths the test bound read-only (submission, runner, verifier) or system
// paths (/, /usr, /etc/ld.so.cache), or paths never bound (they must not even exist).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "attack.h"

int main(int argc, char** argv) {
  maybe_tighten(argc, argv);
  bool breached = false;
  for (int i = 1; i < argc; ++i) {
    std::string p = argv[i];
    std::string dir = p.substr(0, p.rfind('/') + 1);
    if (dir.empty()) dir = "/";
    auto t = [&](const std::string& what, long rc) { breached |= !refused(what + " " + p, rc); };
    t("create-beside", ::open((dir + "kg_attack_new").c_str(), O_CREAT | O_WRONLY | O_EXCL, 0644));
    t("open-write", ::open(p.c_str(), O_WRONLY));
    t("open-append", ::open(p.c_str(), O_WRONLY | O_APPEND));
    t("open-trunc", ::open(p.c_str(), O_RDWR | O_TRUNC));
    t("truncate", ::truncate(p.c_str(), 0));
    t("chmod", ::chmod(p.c_str(), 0777));
    t("utimes", ::utimes(p.c_str(), nullptr));
    t("rename", ::rename(p.c_str(), (p + ".moved").c_str()));
    t("link", ::link(p.c_str(), (dir + "kg_attack_link").c_str()));
    t("link-into-scratch", ::link(p.c_str(), "/tmp/kg_attack_link"));
    t("symlink-beside", ::symlink("/tmp", (dir + "kg_attack_sym").c_str()));
    t("mkdir-beside", ::mkdir((dir + "kg_attack_dir").c_str(), 0755));
    t("unlink", ::unlink(p.c_str()));
    t("via-proc-root", ::open(("/proc/self/root" + p).c_str(), O_WRONLY));
  }
  return breached ? kBreached : 0;
}

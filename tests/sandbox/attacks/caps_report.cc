// A12 helper: the test installs a copy of this program setuid-root and with file capabilities
// (cap_sys_admin,cap_dac_override+ep) in a host directory bound read-only; setuid_exec runs it.
// It prints its effective ids and capability sets and exits kBreached if it holds any capability
// or a different effective uid than its real uid.
#include <fstream>
#include <unistd.h>

#include "attack.h"

int main() {
  std::ifstream st("/proc/self/status");
  std::string line;
  bool breached = false;
  while (std::getline(st, line)) {
    if (line.rfind("Cap", 0) == 0) {
      std::string v = line.substr(line.find(':') + 1);
      bool zero = v.find_first_not_of("\t 0") == std::string::npos;
      result(line.substr(0, line.find(':')), zero ? "none" : "HELD " + v);
      if (line.rfind("CapEff", 0) == 0 || line.rfind("CapPrm", 0) == 0) breached |= !zero;
    }
  }
  if (::geteuid() != ::getuid()) breached = true;
  result("euid", std::to_string(::geteuid()) + " uid " + std::to_string(::getuid()));
  return breached ? kBreached : 0;
}

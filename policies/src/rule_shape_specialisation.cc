// shape_specialisation (docs/threats.md B14), static half: the artifact reads the environment or
// the process's command line, the inputs a kernel needs to tell "being judged" from "being
// used".
//
// Why: the dynamic half (verifying at the timed shapes, interleaving shapes) catches kernels
// that branch on sizes. A kernel that branches on the MODE can be right under every trial a
// judge runs, because a judge's sandbox always looks like a judge's sandbox (empty
// environment, a runner called kg-runner); no trial can show it wrong. Its tell is the read:
// getenv/secure_getenv/environ, argv through glibc's program_invocation_name, __progname or
// __libc_argv, the host name. A kernel computing an aten op needs none of them.
// Known cost (docs/rules.md): an honest kernel that reads, say, OMP_NUM_THREADS is reported.
#include "kernelgate/rules.h"
#include "rule_util.h"

#include <set>

namespace kg::policy {

std::string rule_shape_specialisation(const ArtifactInfo& info) {
  static const std::set<std::string> s = {"getenv",
                                          "secure_getenv",
                                          "__secure_getenv",
                                          "environ",
                                          "__environ",
                                          "_environ",
                                          "program_invocation_name",
                                          "program_invocation_short_name",
                                          "__progname",
                                          "__progname_full",
                                          "__libc_argv",
                                          "__libc_argc",
                                          "gethostname",
                                          "uname",
                                          "getlogin",
                                          "getlogin_r",
                                          "getppid",
                                          "getauxval"};
  std::vector<std::string> hits;
  for (const auto& i : info.imports)
    if (s.count(i)) hits.push_back(i);
  if (hits.empty()) return "";
  return "reads the process's environment or command line (can tell a judge from real use): " + rules::list_symbols(hits);
}

}  // namespace kg::policy

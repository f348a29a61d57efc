// `kernelgate policy`: show the effective settings of a profile, or list the shipped profiles.
//
//   kernelgate policy show [NAME|FILE]   print the effective settings as TOML (default: competition)
//   kernelgate policy list               the shipped profiles, with their descriptions
//   kernelgate policy schema             every key a profile may set, as a markdown table
//
// Exit status: 0 on success; 2 on bad usage or a profile that does not load (the error names
// the file, line, column and key).
#include <cstdio>
#include <cstring>
#include <string>

#include "kernelgate/policy.h"

namespace {

void usage(FILE* to) {
  std::fprintf(to,
               "usage: kernelgate policy show [NAME|FILE]   print a profile's effective settings as TOML\n"
               "                                          (default: %s; FILE must contain '/' or end in .toml)\n"
               "       kernelgate policy list               list the shipped profiles\n"
               "       kernelgate policy schema             every key a profile may set (docs/policies.md's table)\n"
               "\n"
               "A policy decides how a verdict is judged: tolerances, which rules reject or only flag,\n"
               "trials, timing, limits, the reward formula. Profiles are read from %s\n"
               "(set KERNELGATE_POLICY_DIR to change it); a file may start from one with base = \"NAME\".\n"
               "Example: kernelgate policy show rl-reward > mine.toml; kernelgate eval DIR --policy ./mine.toml\n"
               "Exit status: 0, 2 bad usage or a profile that does not load (the error names file, line, key).\n",
               kg::policy::kDefaultProfile, kg::policy::profile_dir().c_str());
}

int bad_usage(const std::string& why) {
  std::fprintf(stderr, "kernelgate policy: %s\n", why.c_str());
  usage(stderr);
  return 2;
}

int show(const std::string& what) {
  try {
    kg::policy::Policy p = kg::policy::load(what);
    std::fputs(p.to_toml().c_str(), stdout);
    return 0;
  } catch (const kg::policy::PolicyError& e) {
    std::fprintf(stderr, "kernelgate policy: %s\n", e.what());
    return 2;
  }
}

int list() {
  const auto names = kg::policy::profile_names();
  if (names.empty()) {
    std::fprintf(stderr, "kernelgate policy: no profiles in %s\n", kg::policy::profile_dir().c_str());
    return 2;
  }
  int rc = 0;
  for (const auto& n : names) {
    const char* mark = n == kg::policy::kDefaultProfile ? " (default)" : "";
    try {
      kg::policy::Policy p = kg::policy::load(n);
      std::printf("%-14s %s%s\n", n.c_str(), p.description.c_str(), mark);
    } catch (const kg::policy::PolicyError& e) {
      // A broken shipped profile is listed, and makes the command fail, rather than hidden.
      std::printf("%-14s BROKEN: %s%s\n", n.c_str(), e.what(), mark);
      rc = 2;
    }
  }
  return rc;
}

}  // namespace

int kg_cmd_policy(int argc, char** argv) {
  if (argc < 2) return bad_usage("missing subcommand (show, list or schema)");
  const std::string sub = argv[1];
  if (sub == "-h" || sub == "--help" || sub == "help") {
    usage(stdout);
    return 0;
  }
  if (sub == "show") {
    if (argc > 3) return bad_usage("show takes one profile name or file, got " + std::to_string(argc - 2));
    std::string what = argc == 3 ? argv[2] : "";
    if (!what.empty() && what[0] == '-') return bad_usage("unknown option '" + what + "'");
    return show(what);
  }
  if (sub == "list") {
    if (argc > 2) return bad_usage("list takes no arguments");
    return list();
  }
  if (sub == "schema") {
    if (argc > 2) return bad_usage("schema takes no arguments");
    std::fputs(kg::policy::schema_table().c_str(), stdout);
    return 0;
  }
  return bad_usage("unknown subcommand '" + sub + "' (expected show, list or schema)");
}

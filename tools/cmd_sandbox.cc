// `kernelgate sandbox`: run any command inside kernelgate's sandbox and print the result record.
//
//   kernelgate sandbox [--profile compile|run-cpu|run-cuda] [--ro PATH]... [--rw PATH]...
//                      [--time S] [--wall S] [--mem MB] [--procs N] [--env K=V]... [--json FILE]
//                      [--audit] -- CMD ARGS...
//
// The command's stdout and stderr pass through (capped at the output limit); the record (JSON,
// docs/sandbox.md) goes to stdout after it, or to FILE. CMD without a '/' is looked up in
// /usr/local/bin, /usr/bin, /bin. The environment inside is PATH, HOME, TMPDIR and LANG plus --env
// (and CUDA_CACHE_DISABLE=1 for run-cuda unless --env sets it).
//
// Exit status: 0 when the record's status is OK, 1 for any other status, 2 on bad usage or when
// the sandbox could not be started at all.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "kernelgate/sandbox.h"

namespace {

void usage(FILE* to) {
  std::fprintf(to,
               "usage: kernelgate sandbox [--profile compile|run-cpu|run-cuda] [--ro PATH]... [--rw PATH]...\n"
               "                          [--time S] [--wall S] [--mem MB] [--procs N] [--env K=V]...\n"
               "                          [--json FILE] [--audit] -- CMD ARGS...\n"
               "\n"
               "Runs CMD in the sandbox kernelgate builds and runs submissions in (namespaces, seccomp\n"
               "filter of the profile, limits, only the bound paths) and prints its result record (status\n"
               "OK/RE/SG/TO/ML/XX, times, memory, a denied syscall) as JSON: to see what a profile allows.\n"
               "  --profile P   syscall filter and devices (default run-cpu)\n"
               "  --ro/--rw     bind a host path at the same path inside, read-only / writable\n"
               "  --time S      CPU seconds of the whole tree (default 10)\n"
               "  --wall S      wall-clock seconds (default 30)\n"
               "  --mem MB      memory of the whole tree (default 4096)\n"
               "  --procs N     processes and threads (default 64)\n"
               "  --env K=V     add to the environment inside (default PATH HOME TMPDIR LANG)\n"
               "  --json FILE   write the record to FILE instead of stdout\n"
               "  --audit       list syscalls outside the profile instead of killing (never for untrusted code)\n"
               "Example: kernelgate sandbox --profile run-cpu --ro /usr -- /usr/bin/cat /etc/hostname\n"
               "Exit status: 0 status OK, 1 any other status, 2 bad usage or sandbox failure; docs/sandbox.md\n");
}

int bad_usage(const std::string& why) {
  std::fprintf(stderr, "kernelgate sandbox: %s\n", why.c_str());
  usage(stderr);
  return 2;
}

bool parse_number(const char* text, double* out) {
  if (!text || !*text) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text, &end);
  if (errno != 0 || *end != 0 || !(v > 0) || v > 1e9) return false;
  *out = v;
  return true;
}

std::string resolve(const std::string& cmd) {
  if (cmd.find('/') != std::string::npos) return cmd;
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"}) {
    std::string p = std::string(dir) + "/" + cmd;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

}  // namespace

int kg_cmd_sandbox(int argc, char** argv) {
  namespace sb = kg::sandbox;
  sb::Spec spec;
  spec.capture_output = false;
  spec.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8"};
  std::string json_file;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)name;
      return argv[++i];
    };
    if (a == "--") {
      ++i;
      break;
    } else if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else if (a == "--profile") {
      const char* v = value("--profile");
      if (!v || !sb::parse_profile(v, &spec.profile)) return bad_usage("--profile wants compile, run-cpu or run-cuda");
    } else if (a == "--ro" || a == "--rw") {
      const char* v = value(a.c_str());
      if (!v || v[0] != '/') return bad_usage(a + " wants an absolute path");
      if (::access(v, F_OK) != 0) return bad_usage(a + " " + v + ": " + std::strerror(errno));
      spec.binds.push_back({v, a == "--rw"});
    } else if (a == "--time" || a == "--wall" || a == "--mem" || a == "--procs") {
      double d;
      if (!parse_number(value(a.c_str()), &d)) return bad_usage(a + " wants a positive number");
      if (a == "--time") spec.limits.cpu_s = d;
      if (a == "--wall") spec.limits.wall_s = d;
      if (a == "--mem") spec.limits.memory_mb = static_cast<uint64_t>(d);
      if (a == "--procs") spec.limits.max_processes = static_cast<int>(d);
    } else if (a == "--env") {
      const char* v = value("--env");
      if (!v || !std::strchr(v, '=') || v[0] == '=') return bad_usage("--env wants K=V");
      std::string kv = v, key = kv.substr(0, kv.find('=') + 1);
      for (auto it = spec.env.begin(); it != spec.env.end();) it = it->compare(0, key.size(), key) == 0 ? spec.env.erase(it) : it + 1;
      spec.env.push_back(kv);
    } else if (a == "--json") {
      const char* v = value("--json");
      if (!v) return bad_usage("--json wants a file");
      json_file = v;
    } else if (a == "--audit") {
      spec.audit_syscalls = true;
    } else {
      return bad_usage("unknown option " + a);
    }
  }
  if (i >= argc) return bad_usage("no command given (put it after --)");
  // CUDA's JIT cache would be written under $HOME after kg-runner's second stage forbids writes.
  if (spec.profile == sb::Profile::RunCuda) {
    bool set = false;
    for (const auto& e : spec.env) set |= e.rfind("CUDA_CACHE_DISABLE=", 0) == 0;
    if (!set) spec.env.push_back("CUDA_CACHE_DISABLE=1");
  }
  std::string cmd = resolve(argv[i]);
  if (cmd.empty()) return bad_usage(std::string("command not found: ") + argv[i]);
  spec.argv.push_back(cmd);
  for (++i; i < argc; ++i) spec.argv.push_back(argv[i]);

  sb::Record rec;
  try {
    rec = sb::run(spec);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelgate sandbox: %s\n", e.what());
    return 2;
  }
  std::string json = rec.to_json() + "\n";
  if (json_file.empty()) {
    std::fflush(stdout);
    std::fputs(json.c_str(), stdout);
  } else {
    FILE* f = std::fopen(json_file.c_str(), "w");
    if (!f || std::fputs(json.c_str(), f) < 0 || std::fclose(f) != 0) {
      std::fprintf(stderr, "kernelgate sandbox: cannot write %s: %s\n", json_file.c_str(), std::strerror(errno));
      return 2;
    }
  }
  return rec.status == sb::Status::OK ? 0 : 1;
}

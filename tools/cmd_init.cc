// `kernelgate init DIR --ops LIST [--kind cpu|cuda|nvrtc|python]`: writes a submission skeleton.
#include "kernelgate/loader.h"

#include <cstdio>
#include <string>
#include <vector>

namespace {

const char* kInitUsage =
    "usage: kernelgate init DIR --ops LIST [--kind cpu|cuda|nvrtc|python]\n"
    "\n"
    "Writes DIR/<op folder>/ for each overload in LIST (comma-separated, e.g. relu.default,add.Tensor)\n"
    "with a stub carrying the signature kernelgate calls: <folder>_implementation.cpp (cpu, the\n"
    "default), .cu (cuda), .cu plus kernelgate.toml's [launch] table (nvrtc), or .py (python). Stubs build and\n"
    "fail every test until implemented. Existing files are never overwritten.\n"
    "Example: kernelgate init my_kernels --ops relu.default,add.Tensor --kind cuda\n"
    "Exit status: 0 written, 1 some op was unknown or a file existed, 2 bad usage.\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "kernelgate init: %s\n\n%s", msg.c_str(), kInitUsage);
  return 2;
}

}  // namespace

int kg_cmd_init(int argc, char** argv) {
  std::string dir;
  std::vector<std::string> ops;
  kg::loader::Kind kind = kg::loader::Kind::Cpu;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kInitUsage, stdout);
      return 0;
    } else if (a == "--ops" || a == "--kind") {
      if (i + 1 >= argc) return usage_error(a + " needs a value");
      std::string v = argv[++i];
      if (a == "--kind") {
        if (!kg::loader::parse_kind(v, &kind)) return usage_error("--kind must be cpu, cuda, nvrtc or python, got '" + v + "'");
      } else {
        std::string cur;
        for (char c : v + ",") {
          if (c == ',') {
            if (!cur.empty()) ops.push_back(cur);
            cur.clear();
          } else if (c != ' ') {
            cur += c;
          }
        }
      }
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option " + a);
    } else if (dir.empty()) {
      dir = a;
    } else {
      return usage_error("more than one directory given");
    }
  }
  if (dir.empty()) return usage_error("no directory given");
  if (ops.empty()) return usage_error("--ops needs at least one overload name (e.g. relu.default)");
  kg::loader::InitResult r;
  try {
    r = kg::loader::write_stubs(dir, ops, kind);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelgate init: %s\n", e.what());
    return 2;
  }
  for (const auto& w : r.written) std::printf("wrote %s\n", w.c_str());
  for (const auto& [what, why] : r.problems) std::fprintf(stderr, "kernelgate init: %s: %s\n", what.c_str(), why.c_str());
  if (!r.written.empty()) std::printf("next: implement the stubs, then `kernelgate eval %s`\n", dir.c_str());
  return r.problems.empty() ? 0 : 1;
}

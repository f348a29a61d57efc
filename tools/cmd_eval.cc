// `kernelgate eval DIR [--suite NAME] [--ops LIST] [--policy NAME|FILE] [--device cpu|cuda|auto]
//                      [--out DIR] [--seed N] [--no-timing] [--verbose]`
#include "kernelgate/harness.h"
#include "kernelgate/policy.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

namespace {

const char* kEvalUsage =
    "usage: kernelgate eval DIR|--self-check [--suite NAME] [--ops LIST] [--policy NAME|FILE]\n"
    "                           [--device cpu|cuda|auto] [--out DIR] [--seed N] [--no-timing] [--verbose]\n"
    "\n"
    "Builds every op folder of the submission DIR in the sandbox, runs it on inputs drawn from a\n"
    "secret seed (or --seed N to reproduce), compares with PyTorch eager, times passing ops, and\n"
    "writes OUT/results.json (OUT defaults to ./kernelgate-out). Prints a verdict table.\n"
    "  --suite NAME   sample suite (default smoke)\n"
    "  --ops LIST     comma-separated overloads to evaluate (default: every op folder)\n"
    "  --policy P     policy profile name or TOML file (default competition)\n"
    "  --self-check   no submission: the runner calls each aten overload of the suite itself;\n"
    "                 every op must pass (checks inputs, protocol, sandbox and comparison)\n"
    "Exit status: 0 every evaluated op passed, 1 some op failed, was rejected or errored, 2 bad usage.\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "kernelgate eval: %s\n\n%s", msg.c_str(), kEvalUsage);
  return 2;
}

}  // namespace

int kg_cmd_eval(int argc, char** argv) {
  kg::harness::EvalOptions opt;
  std::string policy_name = kg::policy::kDefaultProfile;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kEvalUsage, stdout);
      return 0;
    } else if (a == "--suite" || a == "--ops" || a == "--policy" || a == "--device" || a == "--out" || a == "--seed" ||
               a == "--runner") {
      const char* v = value(a.c_str());
      if (!v) return usage_error(a + " needs a value");
      if (a == "--suite") opt.suite = v;
      else if (a == "--policy") policy_name = v;
      else if (a == "--device") opt.device = v;
      else if (a == "--out") opt.out_dir = v;
      else if (a == "--runner") opt.runner_path = v;
      else if (a == "--ops") {
        std::string list = v, cur;
        for (char c : list + ",") {
          if (c == ',') {
            if (!cur.empty()) opt.ops.push_back(cur);
            cur.clear();
          } else if (c != ' ') {
            cur += c;
          }
        }
        if (opt.ops.empty()) return usage_error("--ops needs at least one overload name");
      } else if (a == "--seed") {
        char* end = nullptr;
        errno = 0;
        unsigned long long s = std::strtoull(v, &end, 0);
        if (errno || !end || *end || !*v) return usage_error(std::string("--seed must be a non-negative integer, got '") + v + "'");
        opt.seed = s;
        opt.seed_given = true;
      }
    } else if (a == "--self-check") {
      opt.self_check = true;
    } else if (a == "--no-timing") {
      opt.timing = false;
    } else if (a == "--verbose" || a == "-v") {
      opt.verbose = true;
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option " + a);
    } else if (opt.submission.empty()) {
      opt.submission = a;
    } else {
      return usage_error("more than one submission directory given");
    }
  }
  if (opt.self_check) {
    if (!opt.submission.empty()) return usage_error("--self-check takes no submission directory");
  } else if (opt.submission.empty()) {
    return usage_error("no submission directory given");
  }
  if (opt.device == "auto") opt.device = "cpu";
  if (opt.device != "cpu" && opt.device != "cuda") return usage_error("--device must be cpu, cuda or auto");
  std::error_code ec;
  if (!opt.self_check && !std::filesystem::is_directory(opt.submission, ec)) {
    std::fprintf(stderr, "kernelgate eval: %s: not a directory\n", opt.submission.c_str());
    return 2;
  }
  if (!opt.self_check) opt.submission = std::filesystem::absolute(opt.submission).lexically_normal().string();
  if (!opt.submission.empty() && opt.submission.back() == '/') opt.submission.pop_back();

  kg::policy::Policy policy;
  try {
    policy = kg::policy::load(policy_name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelgate eval: %s\n", e.what());
    return 2;
  }
  kg::harness::Report report;
  try {
    report = kg::harness::evaluate(opt, policy);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelgate eval: %s\n", e.what());
    return 2;
  }
  std::filesystem::create_directories(opt.out_dir, ec);
  const std::string path = (std::filesystem::path(opt.out_dir) / "results.json").string();
  std::ofstream out(path);
  out << kg::harness::report_json(report);
  if (!out) {
    std::fprintf(stderr, "kernelgate eval: cannot write %s\n", path.c_str());
    return 2;
  }
  std::cout << kg::harness::report_table(report);
  std::cout << "\nresults: " << path << "\n";
  return kg::harness::report_exit_code(report);
}

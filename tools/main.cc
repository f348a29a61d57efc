// kernelgate: parse the subcommand, dispatch, report. Subcommands live in their own files.
#include <execinfo.h>
#include <malloc.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

int kg_cmd_eval(int argc, char** argv);
int kg_cmd_audit(int argc, char** argv);
int kg_cmd_repro(int argc, char** argv);
int kg_cmd_sandbox(int argc, char** argv);
int kg_cmd_policy(int argc, char** argv);
int kg_cmd_ops(int argc, char** argv);
int kg_cmd_init(int argc, char** argv);
int kg_cmd_merge(int argc, char** argv);
int kg_cmd_compare(int argc, char** argv);
int kg_cmd_warmup(int argc, char** argv);
int kg_cmd_serve(int argc, char** argv);
int kg_cmd_train(int argc, char** argv);
int kg_cmd_grad(int argc, char** argv);
int kg_cmd_daemon(int argc, char** argv);

namespace {

const char* kUsage =
    "usage: kernelgate <command> [options]\n"
    "\n"
    "commands:\n"
    "  eval DIR      evaluate a submission: build, run on chosen inputs, compare with PyTorch, time\n"
    "                (--batch DIR: every submission inside DIR; --shard, --resume: docs/batches.md)\n"
    "  audit DIR     evaluate under the audit profile and write a forwardable report (audit.md, audit.json)\n"
    "  init DIR      write op folders with stubs carrying the expected signatures (--ops LIST)\n"
    "  merge         combine the outputs of a sharded run (--shard I/N) into one (--out OUT SHARD_OUT...)\n"
    "  compare A B   two results side by side per op; exit 1 when a claimed pass or speedup of B does not hold in A\n"
    "  ops           list the overloads each suite covers, with sample counts\n"
    "  repro DIR     re-run one sample of a submission (the line results.json gives)\n"
    "  sandbox       run any command under a sandbox profile and print its result record\n"
    "  policy        list policy profiles or show one's effective settings\n"
    "  serve         run the reward service: submissions over HTTP, results and rewards (docs/serve.md)\n"
    "  train-check DIR  train a small GPT (or --model PROBLEM.py) with and without the submission's kernels\n"
    "                installed over aten; exit 1 when the losses leave the policy's band (docs/training.md)\n"
    "  grad-check DIR  backward correctness: gradients through the submission's kernels against eager autograd\n"
    "  warmup        build the precompiled headers every build reuses into the cache, ahead of the first build\n"
    "  daemon        keep a worker ready so that `kernelgate eval` with KERNELGATE_DAEMON set skips the start-up\n"
    "  version       print the version\n"
    "\n"
    "Example, the first minute:\n"
    "  kernelgate init mine --ops relu.default      # a stub with the signature kernelgate calls\n"
    "  kernelgate eval mine --out out               # build, judge, time; then open out/report.html\n"
    "\n"
    "`kernelgate <command> --help` describes a command. Exit status: 0 success, 1 a submission\n"
    "failed or was rejected (or the sandboxed command did not end OK), 2 bad usage or configuration.\n";

// A crash of kernelgate itself (never of a submission: those run in other processes) prints
// where it happened before the default action, so a report can name the bug. It runs on its own
// stack, so a stack overflow is reported too.
void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  char line[160];
  auto* uc = static_cast<ucontext_t*>(context);
  int n = std::snprintf(line, sizeof line, "kernelgate: internal error: signal %d at address %p, pc %p, sp %p; backtrace:\n", sig,
                        info->si_addr, reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]),
                        reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RSP]));
  ssize_t ignored = ::write(STDERR_FILENO, line, static_cast<size_t>(n));
  if (uc->uc_mcontext.gregs[REG_RIP] == 0) {
    // A call through a null function pointer: the caller's return address is on top of the stack.
    void* ret = *reinterpret_cast<void**>(uc->uc_mcontext.gregs[REG_RSP]);
    ::backtrace_symbols_fd(&ret, 1, STDERR_FILENO);
  }
  (void)ignored;
  void* frames[64];
  int count = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, count, STDERR_FILENO);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_crash_reporter() {
  static char alt_stack[1 << 16];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = on_fatal_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(sig, &sa, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  install_crash_reporter();
  // Suites draw, clone and compare tensors of hundreds of MB call after call (a _foreach over a
  // model's parameters). glibc's defaults return freed blocks to the kernel, and the next draw
  // pays a page fault and a zeroed page per 4 KiB: a quarter of a self-check's time under perf.
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  if (cmd == "eval") return kg_cmd_eval(argc - 1, argv + 1);
  if (cmd == "audit") return kg_cmd_audit(argc - 1, argv + 1);
  if (cmd == "repro") return kg_cmd_repro(argc - 1, argv + 1);
  if (cmd == "sandbox") return kg_cmd_sandbox(argc - 1, argv + 1);
  if (cmd == "policy") return kg_cmd_policy(argc - 1, argv + 1);
  if (cmd == "ops") return kg_cmd_ops(argc - 1, argv + 1);
  if (cmd == "init") return kg_cmd_init(argc - 1, argv + 1);
  if (cmd == "merge") return kg_cmd_merge(argc - 1, argv + 1);
  if (cmd == "compare") return kg_cmd_compare(argc - 1, argv + 1);
  if (cmd == "warmup") return kg_cmd_warmup(argc - 1, argv + 1);
  if (cmd == "serve") return kg_cmd_serve(argc - 1, argv + 1);
  if (cmd == "train-check") return kg_cmd_train(argc - 1, argv + 1);
  if (cmd == "grad-check") return kg_cmd_grad(argc - 1, argv + 1);
  if (cmd == "daemon") return kg_cmd_daemon(argc - 1, argv + 1);
  if (cmd == "version" || cmd == "--version") {
    std::printf("kernelgate %s\n", KG_VERSION_STRING);
    return 0;
  }
  std::fprintf(stderr, "kernelgate: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
  return 2;
}

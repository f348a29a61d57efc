// `kernelgate serve --listen HOST:PORT --token-file FILE --state DIR`: the reward service
// (kernelgate/serve.h, docs/serve.md).
#ifdef KG_HAVE_SERVE
#include "kernelgate/serve.h"
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

const char* kServeUsage =
    "usage: kernelgate serve --listen HOST:PORT --token-file FILE --state DIR [options]\n"
    "\n"
    "Runs the reward service: clients POST submissions to /v1/evaluate (bearer token from FILE,\n"
    "one a line), poll GET /v1/tasks/{id}, and get each op's results.json object, the feedback\n"
    "text and a reward block (docs/serve.md). Tasks and results live in DIR/tasks.sqlite3: a\n"
    "restart re-queues what was not decided. SIGTERM or SIGINT: stop admitting (503), let running\n"
    "tasks finish for --drain-s, put the rest back in the queue, exit 0.\n"
    "\n"
    "options:\n"
    "  --listen HOST:PORT   address to listen on (default 127.0.0.1:8470)\n"
    "  --token-file FILE    bearer tokens, one a line, at least 16 characters each (required)\n"
    "  --state DIR          task database and task folders (required; created)\n"
    "  --policy NAME        policy profile when a request names none (default rl-reward)\n"
    "  --suite NAME         suite when a request names none (default auto: each op on the smallest\n"
    "                       suite that has samples for it)\n"
    "  --device D           cpu | cuda | auto (default auto)\n"
    "  --workers N          evaluations at once (default 2)\n"
    "  --jobs N             builds at once over all evaluations (default 2)\n"
    "  --queue-limit N      queued tasks beyond which a submit gets 429 (default 256)\n"
    "  --token-tasks N      queued + running tasks per token beyond which 429 (default 64)\n"
    "  --max-body-bytes N   largest request body (default 4194304; over it: 413)\n"
    "  --max-files N        files per task (default 64)\n"
    "  --max-file-bytes N   bytes per file (default 1048576)\n"
    "  --task-timeout-s S   a task still running after S seconds stops before its next op (default 600)\n"
    "  --retention-s S      decided tasks are kept S seconds (default 604800)\n"
    "  --drain-s S          on SIGTERM, how long running tasks may finish (default 60)\n"
    "  --no-runner-pool     start every runner when it is needed\n"
    "\n"
    "example:\n"
    "  head -c 24 /dev/urandom | base64 > tokens; kernelgate serve --token-file tokens --state state\n"
    "  curl -s -H \"Authorization: Bearer $(cat tokens)\" -d @request.json http://127.0.0.1:8470/v1/evaluate\n"
    "Exit status: 0 after a SIGTERM or SIGINT drain, 2 bad usage or a state/token file it cannot use.\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "kernelgate serve: %s\n\n%s", msg.c_str(), kServeUsage);
  return 2;
}

bool number(const char* text, double lo, double hi, double* out) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (!end || *end || end == text || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

}  // namespace

int kg_cmd_serve(int argc, char** argv) {
#ifndef KG_HAVE_SERVE
  (void)argc, (void)argv;
  std::fprintf(
      stderr,
      "kernelgate serve: this build has no service: install libcpp-httplib-dev and libsqlite3-dev (tools/install-deps) and rebuild\n");
  return 2;
#else
  kg::serve::ServeOptions o;
  o.device = "auto";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kServeUsage, stdout);
      return 0;
    }
    if (a == "--no-runner-pool") {
      o.runner_pool = false;
      continue;
    }
    if (i + 1 >= argc) return usage_error(a + " needs a value, or is not an option");
    const char* v = argv[++i];
    double n = 0;
    auto need = [&](double lo, double hi) {
      if (!number(v, lo, hi, &n)) {
        usage_error(a + ": \"" + v + "\" is not a number from " + std::to_string(lo) + " to " + std::to_string(hi));
        return false;
      }
      return true;
    };
    if (a == "--listen") {
      const std::string hp = v;
      const size_t colon = hp.rfind(':');
      double port = 0;
      if (colon == std::string::npos || colon == 0 || !number(hp.c_str() + colon + 1, 0, 65535, &port))
        return usage_error("--listen: \"" + hp + "\" is not HOST:PORT");
      o.host = hp.substr(0, colon);
      o.port = static_cast<int>(port);
    } else if (a == "--token-file") o.token_file = v;
    else if (a == "--state") o.state_dir = v;
    else if (a == "--policy") o.policy = v;
    else if (a == "--suite") o.suite = v;
    else if (a == "--device") o.device = v;
    else if (a == "--workers") {
      if (!need(1, 256)) return 2;
      o.workers = static_cast<int>(n);
    } else if (a == "--jobs") {
      if (!need(1, 256)) return 2;
      o.jobs = static_cast<int>(n);
    } else if (a == "--queue-limit") {
      if (!need(1, 1e7)) return 2;
      o.queue_limit = static_cast<size_t>(n);
    } else if (a == "--token-tasks") {
      if (!need(1, 1e7)) return 2;
      o.per_token_tasks = static_cast<int>(n);
    } else if (a == "--max-body-bytes") {
      if (!need(1024, 1e9)) return 2;
      o.max_body_bytes = static_cast<size_t>(n);
    } else if (a == "--max-files") {
      if (!need(1, 100000)) return 2;
      o.max_files = static_cast<size_t>(n);
    } else if (a == "--max-file-bytes") {
      if (!need(1, 1e9)) return 2;
      o.max_file_bytes = static_cast<size_t>(n);
    } else if (a == "--task-timeout-s") {
      if (!need(1, 86400)) return 2;
      o.task_timeout_s = n;
    } else if (a == "--retention-s") {
      if (!need(0, 1e9)) return 2;
      o.retention_s = n;
    } else if (a == "--drain-s") {
      if (!need(0, 86400)) return 2;
      o.drain_s = n;
    } else return usage_error("unknown option " + a);
  }
  return kg::serve::serve(o);
#endif
}

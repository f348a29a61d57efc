// kernelgate serve: the reward service RL trainers and leaderboards call over HTTP (docs/serve.md).
// The service process is the supervisor: submission code only ever runs in the sandboxed build
// and run children the evaluation engine starts, exactly as for `kernelgate eval`.
#pragma once

#include <cstddef>
#include <string>

namespace kg::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8470;
  std::string token_file;            // bearer tokens, one a line ('#' comments and blank lines ignored)
  std::string state_dir;             // tasks.sqlite3 and each task's files and outputs
  std::string policy = "rl-reward";  // when a request names none
  std::string suite = "auto";        // when a request names none: each op on the smallest suite that has it
  std::string device = "auto";       // cpu | cuda | auto
  int workers = 2;                   // evaluations at once
  int jobs = 2;                      // builds at once over all evaluations
  int http_threads = 64;
  size_t queue_limit = 256;  // queued tasks beyond which a submit answers 429
  int per_token_tasks = 64;  // queued + running tasks one token may have
  size_t max_body_bytes = 4u << 20;
  size_t max_files = 64;
  size_t max_file_bytes = 1u << 20;
  double task_timeout_s = 600;       // a task still running then stops before its next op
  double retention_s = 7 * 86400.0;  // decided tasks are kept this long
  double drain_s = 60;               // on SIGTERM: how long running tasks may finish
  bool runner_pool = true;
};

// Runs until SIGTERM or SIGINT: stops admitting (503), lets running tasks finish for up to
// drain_s (the rest go back to the queue, to run after a restart), and returns 0. Returns 2 with
// a message on stderr for a configuration error (unreadable token file, unusable state folder,
// port in use).
int serve(const ServeOptions& options);

}  // namespace kg::serve

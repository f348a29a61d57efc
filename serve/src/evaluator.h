// What the service asks of the evaluation engine: one task's evaluation, with the engine's warm
// state (runner pool, eager runner, device lock, build slots) kept across tasks. The one
// implementation (evaluator.cc) is the only translation unit of the service that includes torch.
#pragma once

#include "request.h"

#include "kernelgate/serve.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kg::serve {

struct EvalTask {
  std::string id;
  TaskRequest request;
  std::string submission_dir;  // the files, written out
  std::string out_dir;
  std::function<std::string()> stop_reason;  // "" to go on
};

struct EvalOutcome {
  bool ok = false;  // evaluated (whatever the verdicts); false: `error` says why not
  json result;      // ops, summary, feedback, reward
  std::string error;
  std::string verdict;             // reward.verdict
  std::vector<std::string> rules;  // reward.rules
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual EvalOutcome evaluate(const EvalTask& task) = 0;
  // Per device: the runners started ahead (pool size); the service adds busy and queued.
  virtual json devices() = 0;
  // Refuses a request whose policy or suite the service cannot use (400), before it is queued.
  virtual void check(const TaskRequest& request) = 0;
  virtual void shutdown() = 0;
};

std::unique_ptr<Evaluator> make_evaluator(const ServeOptions& options);

}  // namespace kg::serve

// The service's state: admission, the priority queue, the workers, cancel and drain
// (service.cc). The HTTP layer (http.cc) only translates requests into these calls.
#pragma once

#include "evaluator.h"
#include "metrics.h"
#include "request.h"
#include "store.h"

#include "kernelgate/serve.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace kg::serve {

struct Admission {
  int status = 202;  // 202 added, 200 the same task again, 409, 429, 503
  std::string task_id;
  std::string task_status;
  std::string message;  // for 409/429/503
  int retry_after_s = 0;
};

class Service {
 public:
  Service(const ServeOptions& options, std::unique_ptr<Evaluator> evaluator);
  ~Service();
  // Re-queues what an earlier process left unfinished and starts the workers.
  void start();
  Admission submit(TaskRequest request, const std::string& token_id);
  // The task as GET /v1/tasks/{id} answers it; null when unknown.
  json task(const std::string& id);
  // Cancels a queued task at once and a running one before its next op; null when unknown.
  json cancel(const std::string& id);
  json health();
  json workers();
  std::string metrics_text();
  Metrics& metrics() { return metrics_; }
  // Stops admitting and taking tasks; running tasks finish within `drain_s` or go back to the queue.
  void drain();
  bool draining() const { return draining_; }
  const RequestLimits& limits() const { return limits_; }
  Evaluator& evaluator() { return *evaluator_; }

 private:
  struct Queued {
    int priority;
    int64_t seq;
    std::string id;
    bool operator<(const Queued& o) const { return priority != o.priority ? priority > o.priority : seq < o.seq; }
  };
  void worker();
  void run_task(const StoredTask& t, const std::atomic<bool>& cancel);
  std::string task_dir(const std::string& id) const;
  void expire_old();

  ServeOptions options_;
  RequestLimits limits_;
  std::unique_ptr<Evaluator> evaluator_;
  Store store_;
  Metrics metrics_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::set<Queued> queue_;
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> running_;  // id -> cancel flag
  int64_t next_seq_ = 1;
  std::atomic<bool> draining_{false};
  std::atomic<double> drain_deadline_{0};
  std::vector<std::thread> workers_;
  double last_expiry_ = 0;
};

double now_s();

}  // namespace kg::serve

// Accepted tasks and their results in SQLite (STATE/tasks.sqlite3): a task is committed before
// its 202 is sent, and its result before it is reported completed, so a kill -9 of the service
// loses neither. Torch-free; one connection, serialised by a mutex.
#pragma once

#include "request.h"

#include <sqlite3.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kg::serve {

struct StoredTask {
  std::string id;
  std::string token_id;  // which token submitted it (a digest, never the token)
  std::string status;    // queued | running | completed | failed | cancelled
  TaskRequest request;
  std::string result;  // JSON text, "" until decided
  std::string error;
  double created = 0, started = 0, finished = 0;
  int64_t seq = 0;  // admission order
};

class Store {
 public:
  // Opens (creating) `path`; throws std::runtime_error naming it.
  explicit Store(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  enum class Insert { Added, SameTask, Conflict };
  // Adds a queued task unless its id exists: SameTask when the content matches (existing
  // filled), Conflict when it differs.
  Insert insert(const TaskRequest& request, const std::string& token_id, double now, StoredTask* existing);
  std::optional<StoredTask> get(const std::string& id);
  // Tasks left queued or running by an earlier process, running ones put back to queued: in admission order.
  std::vector<StoredTask> requeue_unfinished();
  void set_running(const std::string& id, double now);
  void set_queued(const std::string& id);  // back to the queue (a drain that ran out of time)
  void set_decided(const std::string& id, const std::string& status, const std::string& result, const std::string& error, double now);
  // Deletes decided tasks finished before `cutoff`; returns their ids (their folders go too).
  std::vector<std::string> expire(double cutoff);
  // queued + running per token.
  int active_for(const std::string& token_id);

 private:
  void exec(const char* sql);
  sqlite3* db_ = nullptr;
  std::mutex mutex_;
  std::string path_;
};

}  // namespace kg::serve

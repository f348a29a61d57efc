// Admission, queue, workers, cancel and drain.
#include "service.h"

#include "kernelgate/remove_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace kg::serve {
namespace fs = std::filesystem;

double now_s() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

namespace {

// Writes each file under `root` (created fresh): folders made here, every file created new
// (O_EXCL | O_NOFOLLOW), so nothing can point outside `root`.
void write_files(const std::string& root, const std::map<std::string, std::string>& files) {
  std::error_code ec;
  kg::loader::remove_tree(root, ec);
  fs::create_directories(root);
  for (const auto& [path, content] : files) {
    const fs::path full = fs::path(root) / path;
    fs::create_directories(full.parent_path());
    const int fd = ::open(full.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error(path + ": cannot write the submission's file: " + std::strerror(errno));
    size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        ::close(fd);
        throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
      }
      done += static_cast<size_t>(n);
    }
    if (::close(fd) != 0) throw std::runtime_error(path + ": close failed: " + std::strerror(errno));
  }
}

json task_json(const StoredTask& t) {
  json j = {{"task_id", t.id}, {"status", t.status}, {"created", t.created}};
  if (t.started > 0) j["started"] = t.started;
  if (t.finished > 0) j["finished"] = t.finished;
  if (!t.result.empty()) j["result"] = json::parse(t.result);
  if (!t.error.empty()) j["error"] = t.error;
  return j;
}

}  // namespace

Service::Service(const ServeOptions& options, std::unique_ptr<Evaluator> evaluator)
    : options_(options), evaluator_(std::move(evaluator)), store_((fs::path(options.state_dir) / "tasks.sqlite3").string()) {
  limits_.max_files = options.max_files;
  limits_.max_file_bytes = options.max_file_bytes;
}

Service::~Service() {
  draining_ = true;
  wake_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
}

std::string Service::task_dir(const std::string& id) const { return (fs::path(options_.state_dir) / "tasks" / id).string(); }

void Service::start() {
  for (const StoredTask& t : store_.requeue_unfinished()) {
    queue_.insert({t.request.priority, t.seq, t.id});
    next_seq_ = std::max(next_seq_, t.seq + 1);
  }
  if (!queue_.empty()) std::cerr << "kernelgate serve: " << queue_.size() << " task(s) from before the restart queued again\n";
  for (int i = 0; i < std::max(1, options_.workers); ++i) workers_.emplace_back([this] { worker(); });
}

namespace {

// A task id already known: the same task (200) when the content matches, else 409.
Admission known_task(const StoredTask& existing, const TaskRequest& request) {
  if (existing.request.content_hash == request.content_hash) return {200, request.task_id, existing.status, "", 0};
  return {409, request.task_id, existing.status, "task id \"" + request.task_id + "\" exists with other content", 0};
}

}  // namespace

Admission Service::submit(TaskRequest request, const std::string& token_id) {
  if (draining_) {
    metrics_.rejected_admission("draining");
    return {503, "", "", "the service is shutting down", 30};
  }
  if (request.task_id.empty()) request.task_id = new_task_id();
  // Asked before the limits, so a repeat is answered even when the queue is full; the insert
  // below answers the same for a repeat that arrives meanwhile.
  if (auto existing = store_.get(request.task_id)) return known_task(*existing, request);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.size() >= options_.queue_limit) {
      metrics_.rejected_admission("queue_full");
      const int per_task = 5;
      return {429, "", "", "the queue is full (" + std::to_string(queue_.size()) + " tasks)",
              std::max(1, static_cast<int>(queue_.size()) * per_task / std::max(1, options_.workers) / 10)};
    }
  }
  if (store_.active_for(token_id) >= options_.per_token_tasks) {
    metrics_.rejected_admission("token_quota");
    return {429, "", "", "this token has " + std::to_string(options_.per_token_tasks) + " tasks queued or running (its quota)", 5};
  }
  StoredTask existing;
  if (store_.insert(request, token_id, now_s(), &existing) != Store::Insert::Added) return known_task(existing, request);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.insert({request.priority, next_seq_++, request.task_id});
  }
  wake_.notify_one();
  return {202, request.task_id, "queued", "", 0};
}

json Service::task(const std::string& id) {
  auto t = store_.get(id);
  return t ? task_json(*t) : json();
}

json Service::cancel(const std::string& id) {
  auto t = store_.get(id);
  if (!t) return json();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = queue_.begin(); it != queue_.end(); ++it)
      if (it->id == id) {
        queue_.erase(it);
        store_.set_decided(id, "cancelled", "", "cancelled by the client before it ran", now_s());
        metrics_.task_decided("cancelled", "", {}, now_s() - t->created, 0);
        return task(id);
      }
    if (auto r = running_.find(id); r != running_.end()) {
      r->second->store(true);
      json j = task_json(*t);
      j["cancel_requested"] = true;
      return j;
    }
  }
  return task_json(*t);  // already decided: unchanged
}

json Service::health() {
  std::lock_guard<std::mutex> lock(mutex_);
  return {{"status", draining_ ? "draining" : "ok"},
          {"version", KG_VERSION_STRING},
          {"queued", queue_.size()},
          {"running", running_.size()},
          {"workers", options_.workers}};
}

json Service::workers() {
  json devices = evaluator_->devices();
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& d : devices) {
    d["busy"] = running_.size();
    d["queued"] = queue_.size();
    d["workers"] = options_.workers;
  }
  json running = json::array();
  for (const auto& [id, flag] : running_) running.push_back(id);
  return {{"devices", devices}, {"running", running}, {"draining", draining_.load()}};
}

std::string Service::metrics_text() {
  size_t queued, running;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queued = queue_.size();
    running = running_.size();
  }
  return metrics_.text({{"kernelgate_queue_depth", static_cast<double>(queued)},
                        {"kernelgate_tasks_running", static_cast<double>(running)},
                        {"kernelgate_workers", static_cast<double>(options_.workers)},
                        {"kernelgate_draining", draining_ ? 1.0 : 0.0}});
}

void Service::drain() {
  drain_deadline_ = now_s() + options_.drain_s;
  draining_ = true;
  wake_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  workers_.clear();
  evaluator_->shutdown();
}

void Service::expire_old() {
  const double now = now_s();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (now - last_expiry_ < 60) return;
    last_expiry_ = now;
  }
  for (const std::string& id : store_.expire(now - options_.retention_s)) {
    std::error_code ec;
    kg::loader::remove_tree(task_dir(id), ec);
  }
}

void Service::worker() {
  for (;;) {
    std::string id;
    std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return draining_ || !queue_.empty(); });
      if (draining_) return;
      id = queue_.begin()->id;
      queue_.erase(queue_.begin());
      running_[id] = cancel;
    }
    if (auto t = store_.get(id); t && t->status == "queued") {
      try {
        run_task(*t, *cancel);
      } catch (const std::exception& e) {
        store_.set_decided(id, "failed", "", std::string("internal error: ") + e.what(), now_s());
        metrics_.task_decided("failed", "", {}, 0, 0);
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_.erase(id);
    }
    expire_old();
  }
}

void Service::run_task(const StoredTask& t, const std::atomic<bool>& cancel) {
  const double started = now_s();
  store_.set_running(t.id, started);
  EvalTask task;
  task.id = t.id;
  task.request = t.request;
  task.submission_dir = (fs::path(task_dir(t.id)) / "submission").string();
  task.out_dir = (fs::path(task_dir(t.id)) / "out").string();
  enum class Stop { None, Cancelled, Timeout, Drain };
  std::atomic<Stop> stop{Stop::None};
  task.stop_reason = [&]() -> std::string {
    if (cancel.load()) return stop = Stop::Cancelled, "cancelled by the client";
    if (now_s() - started > options_.task_timeout_s)
      return stop = Stop::Timeout, "the task timeout of " + std::to_string(options_.task_timeout_s) + " s passed";
    if (draining_ && now_s() > drain_deadline_) return stop = Stop::Drain, "the service is shutting down";
    return "";
  };
  EvalOutcome out;
  try {
    write_files(task.submission_dir, t.request.files);
    out = evaluator_->evaluate(task);
  } catch (const std::exception& e) {
    out.ok = false;
    out.error = e.what();
  }
  std::error_code ec;
  kg::loader::remove_tree(task_dir(t.id), ec);
  const double finished = now_s();
  if (stop == Stop::Drain) {
    store_.set_queued(t.id);  // judged again after the restart: nothing of it was reported
    return;
  }
  std::string status = out.ok ? "completed" : "failed";
  std::string error = out.error;
  if (stop == Stop::Cancelled) status = "cancelled", error = "cancelled by the client while it ran; ops not judged are errors";
  else if (stop == Stop::Timeout)
    status = "failed", error = "the task timeout (" + std::to_string(options_.task_timeout_s) + " s) passed; ops not judged are errors";
  store_.set_decided(t.id, status, out.result.is_null() ? "" : out.result.dump(), error, finished);
  metrics_.task_decided(status, out.verdict, out.rules, started - t.created, finished - started);
}

}  // namespace kg::serve

// The task store: one table, WAL journal, synchronous=FULL (a commit is on disk when it returns).
#include "store.h"

#include <stdexcept>

namespace kg::serve {
namespace {

// A prepared statement, finalised on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& bind(int i, const std::string& v) {
    if (sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) != SQLITE_OK) fail("bind");
    return *this;
  }
  Stmt& bind(int i, double v) {
    if (sqlite3_bind_double(s_, i, v) != SQLITE_OK) fail("bind");
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    if (sqlite3_bind_int64(s_, i, v) != SQLITE_OK) fail("bind");
    return *this;
  }
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("step");
    return false;
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(s_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(s_, col))) : std::string();
  }
  double real(int col) const { return sqlite3_column_double(s_, col); }
  int64_t integer(int col) const { return sqlite3_column_int64(s_, col); }

 private:
  [[noreturn]] void fail(const char* what) const { throw std::runtime_error(path_ + ": sqlite " + what + ": " + sqlite3_errmsg(db_)); }
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  std::string path_;
};

constexpr const char* kColumns = "id, token_id, status, request, result, error, created, started, finished, seq";

StoredTask row(const Stmt& s) {
  StoredTask t;
  t.id = s.text(0);
  t.token_id = s.text(1);
  t.status = s.text(2);
  t.request = TaskRequest::from_stored(json::parse(s.text(3)));
  t.result = s.text(4);
  t.error = s.text(5);
  t.created = s.real(6);
  t.started = s.real(7);
  t.finished = s.real(8);
  t.seq = s.integer(9);
  return t;
}

}  // namespace

Store::Store(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error(path + ": cannot open the task database: " + msg);
  }
  sqlite3_busy_timeout(db_, 5000);
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=FULL");
  exec(
      "CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, token_id TEXT NOT NULL, content_hash TEXT NOT NULL, status TEXT NOT "
      "NULL, request TEXT NOT NULL, result TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '', priority INTEGER NOT NULL, "
      "created REAL NOT NULL, started REAL NOT NULL DEFAULT 0, finished REAL NOT NULL DEFAULT 0, seq INTEGER NOT NULL)");
  exec("CREATE INDEX IF NOT EXISTS tasks_status ON tasks(status)");
}

Store::~Store() { sqlite3_close(db_); }

void Store::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw std::runtime_error(path_ + ": sqlite: " + msg);
  }
}

Store::Insert Store::insert(const TaskRequest& request, const std::string& token_id, double now, StoredTask* existing) {
  std::lock_guard<std::mutex> lock(mutex_);
  {
    Stmt s(db_, (std::string("SELECT ") + kColumns + ", content_hash FROM tasks WHERE id = ?").c_str(), path_);
    s.bind(1, request.task_id);
    if (s.step()) {
      if (existing) *existing = row(s);
      return s.text(10) == request.content_hash ? Insert::SameTask : Insert::Conflict;
    }
  }
  int64_t seq = 0;
  {
    Stmt s(db_, "SELECT COALESCE(MAX(seq), 0) + 1 FROM tasks", path_);
    if (s.step()) seq = s.integer(0);
  }
  Stmt s(db_,
         "INSERT INTO tasks (id, token_id, content_hash, status, request, priority, created, seq) VALUES (?, ?, ?, 'queued', ?, ?, ?, ?)",
         path_);
  s.bind(1, request.task_id).bind(2, token_id).bind(3, request.content_hash).bind(4, request.to_json().dump());
  s.bind(5, static_cast<int64_t>(request.priority)).bind(6, now).bind(7, seq);
  s.step();
  return Insert::Added;
}

std::optional<StoredTask> Store::get(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  Stmt s(db_, (std::string("SELECT ") + kColumns + " FROM tasks WHERE id = ?").c_str(), path_);
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return row(s);
}

std::vector<StoredTask> Store::requeue_unfinished() {
  std::lock_guard<std::mutex> lock(mutex_);
  exec("UPDATE tasks SET status = 'queued', started = 0 WHERE status = 'running'");
  Stmt s(db_, (std::string("SELECT ") + kColumns + " FROM tasks WHERE status = 'queued' ORDER BY seq").c_str(), path_);
  std::vector<StoredTask> out;
  while (s.step()) out.push_back(row(s));
  return out;
}

void Store::set_running(const std::string& id, double now) {
  std::lock_guard<std::mutex> lock(mutex_);
  Stmt s(db_, "UPDATE tasks SET status = 'running', started = ? WHERE id = ?", path_);
  s.bind(1, now).bind(2, id);
  s.step();
}

void Store::set_queued(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  Stmt s(db_, "UPDATE tasks SET status = 'queued', started = 0 WHERE id = ?", path_);
  s.bind(1, id);
  s.step();
}

void Store::set_decided(const std::string& id, const std::string& status, const std::string& result, const std::string& error, double now) {
  std::lock_guard<std::mutex> lock(mutex_);
  Stmt s(db_, "UPDATE tasks SET status = ?, result = ?, error = ?, finished = ? WHERE id = ?", path_);
  s.bind(1, status).bind(2, result).bind(3, error).bind(4, now).bind(5, id);
  s.step();
}

std::vector<std::string> Store::expire(double cutoff) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> ids;
  {
    Stmt s(db_, "SELECT id FROM tasks WHERE status IN ('completed', 'failed', 'cancelled') AND finished < ?", path_);
    s.bind(1, cutoff);
    while (s.step()) ids.push_back(s.text(0));
  }
  Stmt d(db_, "DELETE FROM tasks WHERE status IN ('completed', 'failed', 'cancelled') AND finished < ?", path_);
  d.bind(1, cutoff);
  d.step();
  return ids;
}

int Store::active_for(const std::string& token_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  Stmt s(db_, "SELECT COUNT(*) FROM tasks WHERE token_id = ? AND status IN ('queued', 'running')", path_);
  s.bind(1, token_id);
  return s.step() ? static_cast<int>(s.integer(0)) : 0;
}

}  // namespace kg::serve

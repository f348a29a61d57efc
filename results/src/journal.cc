// The journal (results.h Journal): OUT/journal.jsonl, one JSON document per line, the run's
// identity first and then one line per decided op.
//
// Why a kill never costs a decided op nor leaves a line a reader would take for whole: every line
// goes out in one write(2) on an O_APPEND descriptor and is synced (fdatasync) before append()
// returns. A kill before or during the write leaves no line or a prefix of it; the line has no raw
// newline inside (JSON escapes them), so a prefix always lacks the newline that ends it. A kill
// after the write leaves the whole line in the page cache, which survives the process. On resume,
// a last line without its newline (or not parseable) is that torn write: it is dropped and the file
// cut back to the last whole line before anything is appended after it.
#include "kernelgate/results.h"
#include "kernelgate/unique_fd.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>

namespace kg::results {
namespace {

constexpr int kJournalVersion = 1;

[[noreturn]] void fail_errno(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}

// The folder holding `path`, synced so that a newly created journal's name survives a crash.
void sync_folder_of(const std::string& path) {
  std::string folder = std::filesystem::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  const UniqueFd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir || ::fsync(dir.get()) != 0) fail_errno(folder, "cannot sync the folder holding " + path);
}

std::string read_all(int fd, const std::string& path) {
  std::string text;
  char buf[65536];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno(path, "cannot read");
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
}

// The problem with one line, nlohmann's "[json.exception...] parse error at ...: " prefix cut.
std::string parse_problem(const json::parse_error& e) {
  std::string what = e.what();
  const size_t colon = what.find(": ", what.find("parse error"));
  if (colon != std::string::npos) what = what.substr(colon + 2);
  return "not JSON at byte " + std::to_string(e.byte) + ": " + what;
}

std::string shown(const Shard& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

class FileJournal final : public Journal {
 public:
  FileJournal(std::string path, const RunIdentity& identity) : path_(std::move(path)), identity_(identity) {}

  void create();
  void resume();
  const std::vector<Entry>& decided() const override { return decided_; }
  void append(const std::string& submission, const json& op) override;

 private:
  // Opens (creating when absent) without truncating: the lock comes first, so a second kernelgate
  // writing into the same OUT is refused before it can destroy the first one's journal.
  void open_locked(int extra_flags);
  void write_line(const std::string& line);
  void sync();
  void truncate_to(off_t size);
  // Reads the decided entries; returns the length of the whole lines to keep (0: no header yet).
  off_t read_lines(const std::string& text);
  void check_header(const json& header);
  Entry entry_of(json line, size_t number) const;
  [[noreturn]] void fail_line(size_t number, const std::string& problem) const {
    throw std::runtime_error(path_ + ":" + std::to_string(number) + ": " + problem);
  }

  std::string path_;
  RunIdentity identity_;
  UniqueFd fd_;
  off_t size_ = 0;  // the length of the whole lines in the file: where a failed append is cut back to
  std::vector<Entry> decided_;
  std::mutex mutex_;
};

void FileJournal::open_locked(int extra_flags) {
  fd_ = UniqueFd(::open(path_.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | extra_flags, 0644));
  if (!fd_) fail_errno(path_, "cannot open the journal");
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0) fail_errno(path_, "cannot stat the journal");
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(path_ + ": the journal is not a regular file");
  if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) throw std::runtime_error(path_ + ": another kernelgate is writing this journal; use another --out");
    fail_errno(path_, "cannot lock the journal");
  }
}

void FileJournal::create() {
  if (!fd_) open_locked(O_CREAT);
  truncate_to(0);
  const json header = {{"kernelgate_journal", kJournalVersion}, {"run", identity_json(identity_)}};
  write_line(header.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
  sync();
  sync_folder_of(path_);
}

void FileJournal::resume() {
  open_locked(O_CREAT);  // a journal that is not there yet is read as an empty one
  const std::string text = read_all(fd_.get(), path_);
  const off_t whole = read_lines(text);
  if (whole == 0) return create();  // no whole header: the kill came before anything was decided
  if (whole != static_cast<off_t>(text.size())) {
    truncate_to(whole);
    sync();
  }
  size_ = whole;
}

off_t FileJournal::read_lines(const std::string& text) {
  size_t begin = 0;
  for (size_t number = 1; begin < text.size(); ++number) {
    const size_t newline = text.find('\n', begin);
    if (newline == std::string::npos) break;  // a torn write: the kill came before its newline
    json line;
    try {
      line = json::parse(text.begin() + begin, text.begin() + newline);
    } catch (const json::parse_error& e) {
      if (newline + 1 == text.size()) break;  // the last line, whole in length but not in content: torn too
      fail_line(number, parse_problem(e));
    }
    if (number == 1) check_header(line);
    else decided_.push_back(entry_of(std::move(line), number));
    begin = newline + 1;
  }
  return static_cast<off_t>(begin);
}

void FileJournal::check_header(const json& header) {
  const auto version = header.find("kernelgate_journal");  // end() when not an object
  if (version == header.end()) fail_line(1, "not a kernelgate journal (its first line has no \"kernelgate_journal\")");
  if (*version != kJournalVersion)
    fail_line(1, "journal version " + version->dump() + ", this kernelgate reads version " + std::to_string(kJournalVersion));
  const auto run = header.find("run");
  if (run == header.end()) fail_line(1, "run: missing");
  const RunIdentity theirs = identity_from_json(*run, path_ + ":1: run");
  std::string differs = identity_mismatch(theirs, identity_);
  const Shard a{theirs.shard_index, theirs.shard_count}, b{identity_.shard_index, identity_.shard_count};
  // Unlike a merge, a resume must be of the same shard: it judges only what its shard has left.
  if (differs.empty() && (a.index != b.index || a.count != b.count)) differs = "shard (" + shown(a) + " vs " + shown(b) + ")";
  if (!differs.empty())
    throw std::runtime_error(path_ + ": this journal is of another run (the journal's vs this command's): " + differs +
                             "; use another --out or drop --resume");
}

Journal::Entry FileJournal::entry_of(json line, size_t number) const {
  if (!line.is_object()) fail_line(number, std::string("expected an object, got ") + line.type_name());
  const auto submission = line.find("submission");
  if (submission == line.end()) fail_line(number, "submission: missing");
  if (!submission->is_string()) fail_line(number, std::string("submission: expected a string, got ") + submission->type_name());
  const auto op = line.find("op");
  if (op == line.end()) fail_line(number, "op: missing");
  if (!op->is_object()) fail_line(number, std::string("op: expected an object, got ") + op->type_name());
  return Entry{submission->get<std::string>(), std::move(*op)};
}

void FileJournal::write_line(const std::string& line) {
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(fd_.get(), line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      // Cut back what part of the line went out, so that the next append does not follow a half
      // line that a resume would read as a corrupt one. Best effort: the write's error is the news.
      [[maybe_unused]] const int cut = done > 0 ? ::ftruncate(fd_.get(), size_) : 0;
      errno = error;
      fail_errno(path_, "cannot append to the journal");
    }
    done += static_cast<size_t>(n);
  }
  size_ += static_cast<off_t>(line.size());
}

void FileJournal::sync() {
  if (::fdatasync(fd_.get()) != 0) fail_errno(path_, "cannot sync the journal");
}

void FileJournal::truncate_to(off_t size) {
  if (::ftruncate(fd_.get(), size) != 0) fail_errno(path_, "cannot truncate the journal");
  size_ = size;
}

void FileJournal::append(const std::string& submission, const json& op) {
  // replace: a submission's bytes that are not UTF-8 must not stop a decided op from being kept.
  const std::string line = json{{"submission", submission}, {"op", op}}.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  const std::lock_guard<std::mutex> lock(mutex_);
  write_line(line);
  sync();
}

}  // namespace

std::unique_ptr<Journal> Journal::open(const std::string& path, const RunIdentity& identity, bool resume) {
  auto journal = std::make_unique<FileJournal>(path, identity);
  if (resume) journal->resume();
  else journal->create();
  return journal;
}

}  // namespace kg::results

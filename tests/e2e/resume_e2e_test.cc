// `kernelgate eval --batch` killed with SIGKILL part way and finished with `--resume`: the same
// verdicts as a run left alone, no decided op judged twice, nothing half-written in OUT. And the
// refusals: a resume into an OUT whose journal is of another run, or whose journal is corrupt,
// exits 2 naming journal.jsonl (and the line).
//
// How "not judged twice" is checked: a resume only appends to the journal, one line per op it
// decides. So the resumed journal must start with the killed run's whole lines byte for byte and
// hold exactly one entry per (submission, op) of the batch: the resumed process appended exactly
// the ops the killed one had not decided.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "e2e_util.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kg::e2e;

namespace {

const std::string kRunArgs = " --seed 7 --no-timing --suite smoke";

void copy_op(const std::string& example, const std::string& folder, const fs::path& submission) {
  fs::create_directories(submission / folder);
  fs::copy_file(fs::path(KG_SOURCE_DIR) / "examples" / example / folder / (folder + "_implementation.cpp"),
                submission / folder / (folder + "_implementation.cpp"));
}

// Four cpu submissions: one correct, one buggy, one of each, and one that does not compile.
fs::path make_batch() {
  const fs::path batch = temp_dir("resume-batch");
  copy_op("correct", "relu__default", batch / "correct");
  copy_op("correct", "add__Tensor", batch / "correct");
  copy_op("buggy", "relu__default", batch / "buggy");
  copy_op("buggy", "add__Tensor", batch / "buggy");
  copy_op("correct", "relu__default", batch / "mixed");
  copy_op("buggy", "sum__dim_IntList", batch / "mixed");
  write(batch / "broken" / "relu__default" / "relu__default_implementation.cpp",
        "#include <ATen/ATen.h>\nat::Tensor relu__default_kernel_impl(const at::Tensor& self) { return self.no_such_method(); }\n");
  return batch;
}

// The journal's whole lines (each with its newline); a torn last line is left out.
std::vector<std::string> whole_lines(const fs::path& journal) {
  const std::string text = read(journal);
  std::vector<std::string> lines;
  size_t begin = 0;
  for (size_t nl; (nl = text.find('\n', begin)) != std::string::npos; begin = nl + 1) lines.push_back(text.substr(begin, nl + 1 - begin));
  return lines;
}

// Per submission, per op: the verdict and the test counts, from summary.json.
using Verdicts = std::map<std::string, std::map<std::string, std::string>>;
Verdicts summary_verdicts(const fs::path& out) {
  const json summary = json::parse(read(out / "summary.json"));
  Verdicts v;
  for (const json& s : summary.at("submissions")) {
    auto& ops = v[s.at("name").get<std::string>()];
    ops["(submission)"] = s.at("verdict").get<std::string>();
    for (const json& op : s.at("ops"))
      ops[op.at("op").get<std::string>()] = op.at("verdict").get<std::string>() + " " + op.at("tests").dump();
  }
  return v;
}

// Every results.json and summary.json in OUT parses: nothing half-written where a reader looks.
void expect_documents_whole(const fs::path& out) {
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (name != "results.json" && name != "summary.json") continue;
    EXPECT_TRUE(json::accept(read(e.path()))) << e.path() << " is not whole JSON:\n" << read(e.path());
  }
}

// `kernelgate args` in a process group of its own, stdout and stderr to `log`.
pid_t start(const std::string& args, const fs::path& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execl("/bin/sh", "sh", "-c", (std::string("exec ") + KG_BINARY + " " + args + " </dev/null").c_str(), nullptr);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return pid;
}

// `kernelgate eval --batch BATCH --out OUT` with the run's arguments, and its result.
CommandResult eval_batch(const fs::path& batch, const fs::path& out, const std::string& more = kRunArgs) {
  return run("eval --batch " + batch.string() + " --out " + out.string() + more, 900);
}

// Starts the batch into `out` and kills it with SIGKILL once the journal holds its header and at
// least `decided` ops; returns the journal's whole lines at that moment.
std::vector<std::string> eval_batch_killed_part_way(const fs::path& batch, const fs::path& out, size_t decided) {
  const fs::path journal = out / "journal.jsonl";
  const fs::path log = out.string() + ".log";
  const pid_t pid = start("eval --batch " + batch.string() + " --out " + out.string() + kRunArgs, log);
  int status = 0;
  bool exited = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(8);
  while (!exited && whole_lines(journal).size() < 1 + decided && std::chrono::steady_clock::now() < deadline) {
    exited = ::waitpid(pid, &status, WNOHANG) == pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  }
  ::kill(-pid, SIGKILL);  // and whatever it left running (builds, runners), so that nothing writes into OUT
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(WIFSIGNALED(status)) << "kernelgate ended before it was killed:\n" << read(log);
  return whole_lines(journal);
}

// The pairs (submission, op) the journal's entries decide; a pair decided twice is a failure.
std::set<std::pair<std::string, std::string>> journal_decisions(const std::vector<std::string>& lines) {
  std::set<std::pair<std::string, std::string>> decided;
  for (size_t i = 1; i < lines.size(); ++i) {
    const json entry = json::parse(lines[i]);
    const auto key = std::make_pair(entry.at("submission").get<std::string>(), entry.at("op").at("op").get<std::string>());
    EXPECT_TRUE(decided.insert(key).second) << key.first << " " << key.second << " was judged twice";
  }
  return decided;
}

fs::path copy_of(const fs::path& from, const std::string& name) {
  const fs::path out = temp_dir(name);
  fs::copy(from, out, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  return out;
}

}  // namespace

TEST(ResumeE2E, KilledBatchResumesToTheSameVerdictsJudgingOnlyWhatWasLeft) {
  const fs::path batch = make_batch();
  constexpr size_t kOps = 7;  // correct 2, buggy 2, mixed 2, broken 1

  // The control: the batch left alone.
  const fs::path whole = temp_dir("resume-whole");
  const CommandResult control = eval_batch(batch, whole);
  ASSERT_EQ(control.status, 1) << "buggy and broken submissions fail:\n" << control.output;
  const Verdicts verdicts = summary_verdicts(whole);
  ASSERT_EQ(verdicts.size(), 4u);
  EXPECT_EQ(verdicts.at("correct").at("(submission)"), "pass");
  EXPECT_NE(verdicts.at("broken").at("(submission)"), "pass");
  std::set<std::pair<std::string, std::string>> every_op;
  for (const auto& [name, ops] : verdicts)
    for (const auto& [op, verdict] : ops)
      if (op != "(submission)") every_op.emplace(name, op);
  ASSERT_EQ(every_op.size(), kOps);
  EXPECT_EQ(journal_decisions(whole_lines(whole / "journal.jsonl")), every_op);
  expect_documents_whole(whole);

  // Killed part way, after 1 to 4 decided ops (varied from run to run by the pid): what is in OUT
  // is whole, and some ops are left.
  const size_t kill_after = 1 + ::getpid() % 4;
  RecordProperty("kill_after", static_cast<int>(kill_after));
  SCOPED_TRACE("killed after " + std::to_string(kill_after) + " decided ops");
  const fs::path out = temp_dir("resume-killed");
  const std::vector<std::string> killed = eval_batch_killed_part_way(batch, out, kill_after);
  ASSERT_GE(killed.size(), 1 + kill_after);
  ASSERT_LT(killed.size(), 1 + kOps) << "every op was decided before the kill: nothing left to resume";
  RecordProperty("decided_before_kill", static_cast<int>(killed.size() - 1));
  expect_documents_whole(out);

  // Resumed: the same verdicts; the journal only appended to, one entry per op.
  const CommandResult resumed = eval_batch(batch, out, kRunArgs + " --resume");
  EXPECT_EQ(resumed.status, control.status) << resumed.output;
  EXPECT_EQ(summary_verdicts(out), verdicts) << resumed.output;
  expect_documents_whole(out);
  const std::vector<std::string> after = whole_lines(out / "journal.jsonl");
  EXPECT_EQ(read(out / "journal.jsonl").back(), '\n');
  ASSERT_GE(after.size(), killed.size());
  for (size_t i = 0; i < killed.size(); ++i) EXPECT_EQ(after[i], killed[i]) << "journal line " << i + 1 << " was rewritten";
  EXPECT_EQ(journal_decisions(after), every_op);
  EXPECT_EQ(after.size(), 1 + kOps) << "the resumed run appended " << after.size() - killed.size() << " ops after the " << killed.size() - 1
                                    << " the killed one had decided";

  // Resuming a finished batch judges nothing and keeps the verdicts.
  const std::string finished = read(out / "journal.jsonl");
  const CommandResult again = eval_batch(batch, out, kRunArgs + " --resume");
  EXPECT_EQ(again.status, control.status) << again.output;
  EXPECT_EQ(read(out / "journal.jsonl"), finished);
  EXPECT_EQ(summary_verdicts(out), verdicts);
}

TEST(ResumeE2E, JournalOfAnotherRunOrCorruptIsRefusedNamingTheFile) {
  const fs::path batch = temp_dir("resume-refusals-batch");
  copy_op("correct", "relu__default", batch / "a");
  copy_op("correct", "relu__default", batch / "b");
  const fs::path done = temp_dir("resume-refusals-done");
  ASSERT_EQ(eval_batch(batch, done).status, 0);
  const std::string journal = read(done / "journal.jsonl");

  for (const auto& [args, field] :
       {std::make_pair(std::string(" --seed 8 --no-timing --suite smoke"), std::string("seed (7 vs 8)")),
        std::make_pair(std::string(" --seed 7 --no-timing --suite edge"), std::string("suite (smoke vs edge)"))}) {
    const fs::path out = copy_of(done, "resume-other-run");
    const CommandResult r = eval_batch(batch, out, args + " --resume");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find((out / "journal.jsonl").string()), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(field), std::string::npos) << r.output;
    EXPECT_EQ(read(out / "journal.jsonl"), journal) << "a refused resume changed the journal";
  }

  const fs::path out = copy_of(done, "resume-corrupt");
  std::vector<std::string> lines = whole_lines(out / "journal.jsonl");
  ASSERT_EQ(lines.size(), 3u);
  lines[1] = "{\"submission\": \"a\", \"op\": {\"op\": garbage\n";
  const std::string corrupt = lines[0] + lines[1] + lines[2];
  write(out / "journal.jsonl", corrupt);
  const CommandResult r = eval_batch(batch, out, kRunArgs + " --resume");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find((out / "journal.jsonl").string() + ":2:"), std::string::npos) << r.output;
  EXPECT_EQ(read(out / "journal.jsonl"), corrupt) << "a refused resume changed the journal";
}

// ResultsJournal: OUT/journal.jsonl. Round trips, a resume of another run refused naming the field,
// a torn last line dropped and cut off, a corrupt earlier line refused naming PATH:LINE, appends
// from several threads, a writer killed with SIGKILL at random moments, and random truncations and
// corruptions of a valid journal.
#include "kernelgate/results.h"
#include "merge_fixtures.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace kg::results {
namespace {

namespace fs = std::filesystem;

RunIdentity smoke_run() { return kg::results::testing::smoke_identity(); }

json op_result(const std::string& op, int index, size_t pad = 0) {
  return {{"op", op}, {"verdict", index % 2 ? "FAIL" : "PASS"}, {"index", index}, {"note", std::string(pad, 'x')}};
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary | std::ios::trunc) << text; }

// Every line ends with its newline and parses: what a reader of a journal left alone may expect.
void expect_clean(const fs::path& p) {
  const std::string text = read_text(p);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  size_t begin = 0, number = 1;
  for (size_t nl; (nl = text.find('\n', begin)) != std::string::npos; begin = nl + 1, ++number)
    EXPECT_NO_THROW(json::parse(text.substr(begin, nl - begin))) << p << ":" << number;
  EXPECT_EQ(begin, text.size());
}

class ResultsJournal : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("kg-results-journal-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "journal.jsonl").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A journal of smoke_run() with `n` entries s<i % 3>/op<i>, written through Journal.
  void make_journal(int n, size_t pad = 0) {
    auto j = Journal::open(path_, smoke_run(), false);
    for (int i = 0; i < n; ++i) j->append("s" + std::to_string(i % 3), op_result("op" + std::to_string(i), i, pad));
  }
  // The message Journal::open throws on resume; "" when it opens.
  std::string resume_error(const RunIdentity& id = smoke_run()) {
    try {
      Journal::open(path_, id, true);
    } catch (const std::runtime_error& e) { return e.what(); }
    return "";
  }
  // The journal's text with line `number` (1-based) replaced by `line`.
  std::string with_line(int number, const std::string& line) {
    const std::string text = read_text(path_);
    size_t begin = 0;
    for (int i = 1; i < number; ++i) begin = text.find('\n', begin) + 1;
    const size_t end = text.find('\n', begin);
    return text.substr(0, begin) + line + text.substr(end);
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(ResultsJournal, NewJournalHoldsTheHeaderOnly) {
  auto j = Journal::open(path_, smoke_run(), false);
  EXPECT_TRUE(j->decided().empty());
  const std::string text = read_text(path_);
  ASSERT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1);
  EXPECT_EQ(json::parse(text), (json{{"kernelgate_journal", 1}, {"run", identity_json(smoke_run())}}));
}

TEST_F(ResultsJournal, EntriesRoundTripInOrder) {
  make_journal(5);
  {
    auto j = Journal::open(path_, smoke_run(), true);
    ASSERT_EQ(j->decided().size(), 5u);
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(j->decided()[i].submission, "s" + std::to_string(i % 3));
      EXPECT_EQ(j->decided()[i].op, op_result("op" + std::to_string(i), i));
    }
    j->append("late", op_result("mul", 9));
  }
  auto j = Journal::open(path_, smoke_run(), true);
  ASSERT_EQ(j->decided().size(), 6u);
  EXPECT_EQ(j->decided()[5].submission, "late");
  EXPECT_EQ(j->decided()[5].op["op"], "mul");
  expect_clean(path_);
}

TEST_F(ResultsJournal, EachAppendIsOneLineOnDiskWhenItReturns) {
  auto j = Journal::open(path_, smoke_run(), false);
  j->append("a", json{{"op", "relu"}, {"detail", "line one\nline two"}});
  const std::string text = read_text(path_);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_EQ(json::parse(text.substr(text.find('\n') + 1))["op"]["detail"], "line one\nline two");
}

TEST_F(ResultsJournal, TextThatIsNotUtf8DoesNotStopTheAppend) {
  auto j = Journal::open(path_, smoke_run(), false);
  EXPECT_NO_THROW(j->append("bad\xff name", json{{"op", "relu"}, {"error", "\xc3"}}));
  j.reset();
  EXPECT_EQ(Journal::open(path_, smoke_run(), true)->decided().size(), 1u);
}

TEST_F(ResultsJournal, WithoutResumeAnEarlierJournalIsReplaced) {
  make_journal(4);
  Journal::open(path_, smoke_run(), false);
  EXPECT_TRUE(Journal::open(path_, smoke_run(), true)->decided().empty());
}

TEST_F(ResultsJournal, ResumeWithoutAJournalStartsOne) {
  EXPECT_TRUE(Journal::open(path_, smoke_run(), true)->decided().empty());
  expect_clean(path_);
  EXPECT_EQ(json::parse(read_text(path_))["run"], identity_json(smoke_run()));
}

TEST_F(ResultsJournal, TornLastLineIsDroppedAndCutOff) {
  make_journal(3, 1000);
  const std::string whole = read_text(path_);
  const std::string torn = json{{"submission", "s9"}, {"op", op_result("op9", 9, 1000)}}.dump();
  write_text(path_, whole + torn.substr(0, torn.size() / 2));
  {
    auto j = Journal::open(path_, smoke_run(), true);
    EXPECT_EQ(j->decided().size(), 3u);
    EXPECT_EQ(read_text(path_), whole);  // cut back before anything else is written
    j->append("s9", op_result("op9", 9));
  }
  expect_clean(path_);
  auto j = Journal::open(path_, smoke_run(), true);
  ASSERT_EQ(j->decided().size(), 4u);
  EXPECT_EQ(j->decided()[3].op, op_result("op9", 9));
}

TEST_F(ResultsJournal, WholeLastLineThatIsNotJsonIsDroppedToo) {
  make_journal(2);
  const std::string whole = read_text(path_);
  write_text(path_, whole + std::string(40, '\0') + "\n");  // a crashed file system's zeros
  EXPECT_EQ(Journal::open(path_, smoke_run(), true)->decided().size(), 2u);
  EXPECT_EQ(read_text(path_), whole);
}

TEST_F(ResultsJournal, TornHeaderStartsANewJournal) {
  make_journal(0);
  const std::string header = read_text(path_);
  write_text(path_, header.substr(0, 10));
  EXPECT_TRUE(Journal::open(path_, smoke_run(), true)->decided().empty());
  EXPECT_EQ(read_text(path_), header);
  write_text(path_, "");
  EXPECT_TRUE(Journal::open(path_, smoke_run(), true)->decided().empty());
  EXPECT_EQ(read_text(path_), header);
}

TEST_F(ResultsJournal, CorruptEarlierLineIsAnErrorNamingPathAndLine) {
  make_journal(4);
  const std::string text = with_line(3, "{\"submission\": \"s1\", \"op\": {\"op\": ");
  write_text(path_, text);
  EXPECT_EQ(resume_error().rfind(path_ + ":3: not JSON at byte ", 0), 0u) << resume_error();
  EXPECT_EQ(read_text(path_), text);  // an error changes nothing
  write_text(path_, with_line(2, ""));
  EXPECT_EQ(resume_error().rfind(path_ + ":2: not JSON at byte 1: ", 0), 0u) << resume_error();
}

TEST_F(ResultsJournal, MalformedEntryIsAnErrorNamingPathLineAndField) {
  make_journal(3);
  const std::string original = read_text(path_);
  const auto error_with_line_3 = [&](const std::string& line) {
    write_text(path_, original);
    write_text(path_, with_line(3, line));
    return resume_error();
  };
  EXPECT_EQ(error_with_line_3(R"({"op": {"op": "relu"}})"), path_ + ":3: submission: missing");
  EXPECT_EQ(error_with_line_3(R"({"submission": 4, "op": {"op": "relu"}})"), path_ + ":3: submission: expected a string, got number");
  EXPECT_EQ(error_with_line_3(R"({"submission": "s"})"), path_ + ":3: op: missing");
  EXPECT_EQ(error_with_line_3(R"({"submission": "s", "op": "relu"})"), path_ + ":3: op: expected an object, got string");
  EXPECT_EQ(error_with_line_3(R"(["s", {"op": "relu"}])"), path_ + ":3: expected an object, got array");
  // the last line too: it parses, so it is not a torn write but a wrong one
  write_text(path_, original + R"({"submission": "s"})" + "\n");
  EXPECT_EQ(resume_error(), path_ + ":5: op: missing");
}

TEST_F(ResultsJournal, FirstLineMustBeAJournalHeader) {
  make_journal(2);
  const std::string original = read_text(path_);
  write_text(path_, with_line(1, R"({"submission": "s", "op": {}})"));
  EXPECT_EQ(resume_error(), path_ + ":1: not a kernelgate journal (its first line has no \"kernelgate_journal\")");
  write_text(path_, original);
  write_text(path_, with_line(1, R"({"kernelgate_journal": 2, "run": {}})"));
  EXPECT_EQ(resume_error(), path_ + ":1: journal version 2, this kernelgate reads version 1");
  write_text(path_, original);
  write_text(path_, with_line(1, R"({"kernelgate_journal": 1, "run": {"suite": "smoke"}})"));
  EXPECT_EQ(resume_error(), path_ + ":1: run: kernelgate_version: missing");
}

TEST_F(ResultsJournal, JournalOfAnotherRunIsRefusedNamingTheField) {
  make_journal(2);
  RunIdentity edge = smoke_run();
  edge.suite = "edge";
  EXPECT_EQ(resume_error(edge), path_ + ": this journal is of another run (the journal's vs this command's): suite (smoke vs edge); " +
                                    "use another --out or drop --resume");
  RunIdentity seed8 = smoke_run();
  seed8.seed = 8;
  EXPECT_NE(resume_error(seed8).find(": seed (7 vs 8); "), std::string::npos) << resume_error(seed8);
  RunIdentity shard = smoke_run();
  shard.shard_index = 1;
  shard.shard_count = 2;
  EXPECT_NE(resume_error(shard).find(": shard (0/1 vs 1/2); "), std::string::npos) << resume_error(shard);
  EXPECT_EQ(Journal::open(path_, smoke_run(), true)->decided().size(), 2u);  // refusals changed nothing
}

TEST_F(ResultsJournal, SecondWriterIsRefused) {
  auto first = Journal::open(path_, smoke_run(), false);
  EXPECT_EQ(resume_error(), path_ + ": another kernelgate is writing this journal; use another --out");
  try {
    Journal::open(path_, smoke_run(), false);
    ADD_FAILURE() << "a second writer replaced the journal";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), path_ + ": another kernelgate is writing this journal; use another --out");
  }
  first->append("s", op_result("relu", 0));
  first.reset();
  EXPECT_EQ(Journal::open(path_, smoke_run(), true)->decided().size(), 1u);
}

TEST_F(ResultsJournal, UnopenablePathNamesItAndTheReason) {
  const std::string path = (dir_ / "no-such-folder" / "journal.jsonl").string();
  try {
    Journal::open(path, smoke_run(), false);
    ADD_FAILURE();
  } catch (const std::runtime_error& e) { EXPECT_EQ(std::string(e.what()), path + ": cannot open the journal: No such file or directory"); }
  fs::create_directories(path_);
  EXPECT_EQ(resume_error(), path_ + ": cannot open the journal: Is a directory");
}

TEST_F(ResultsJournal, AppendsFromSeveralThreadsAreAllWhole) {
  constexpr int kThreads = 8, kEach = 40;
  {
    auto j = Journal::open(path_, smoke_run(), false);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < kEach; ++i) j->append("t" + std::to_string(t), op_result("op" + std::to_string(i), i, 3000 + 97 * t));
      });
    for (auto& th : threads) th.join();
  }
  expect_clean(path_);
  auto j = Journal::open(path_, smoke_run(), true);
  ASSERT_EQ(j->decided().size(), size_t{kThreads * kEach});
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& e : j->decided()) {
    const int t = std::stoi(e.submission.substr(1));
    EXPECT_EQ(e.op["note"].get<std::string>().size(), size_t(3000 + 97 * t));
    seen.emplace(e.submission, e.op["op"].get<std::string>());
  }
  EXPECT_EQ(seen.size(), size_t{kThreads * kEach});
}

// Up to 2 MiB, so that a kill often lands inside a write rather than between two.
size_t killed_writer_pad(size_t i) { return (i * 7919 * 37) % (2 << 20); }

// A child appends in a loop, telling the parent through a pipe after each append returns; the
// parent kills it with SIGKILL at a random moment. On resume: every acknowledged entry is there,
// every entry read is whole and in order, and the file is left with whole lines only.
TEST_F(ResultsJournal, WriterKilledAtRandomMomentsLosesNoAcknowledgedEntry) {
  std::mt19937 rng(20261201);
  int torn_tails = 0;
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    make_journal(0);
    int acks[2];
    ASSERT_EQ(::pipe(acks), 0);
    const int wait_for = std::uniform_int_distribution<int>(0, 20)(rng);
    const int then_us = std::uniform_int_distribution<int>(0, 3000)(rng);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(acks[0]);
      try {
        auto j = Journal::open(path_, smoke_run(), true);
        for (int i = 0;; ++i) {
          j->append("s", op_result("op" + std::to_string(i), i, killed_writer_pad(i)));
          if (::write(acks[1], &i, sizeof i) != sizeof i) ::_exit(3);
        }
      } catch (...) { ::_exit(2); }
    }
    ::close(acks[1]);
    int acked = -1, got;
    while (acked + 1 < wait_for && ::read(acks[0], &got, sizeof got) == sizeof got) acked = got;
    std::this_thread::sleep_for(std::chrono::microseconds(then_us));
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself, status " << status;
    while (::read(acks[0], &got, sizeof got) == sizeof got) acked = got;
    ::close(acks[0]);

    const std::string before = read_text(path_);
    const size_t whole_lines = std::count(before.begin(), before.end(), '\n');
    if (!before.empty() && before.back() != '\n') ++torn_tails;
    auto j = Journal::open(path_, smoke_run(), true);
    ASSERT_GE(whole_lines, 1u);
    EXPECT_EQ(j->decided().size(), whole_lines - 1);  // every whole line, the header aside
    EXPECT_GE(static_cast<int>(j->decided().size()), acked + 1);
    for (size_t i = 0; i < j->decided().size(); ++i)
      ASSERT_EQ(j->decided()[i].op, op_result("op" + std::to_string(i), int(i), killed_writer_pad(i)));
    j.reset();
    expect_clean(path_);
    EXPECT_EQ(read_text(path_), before.substr(0, before.rfind('\n') + 1));
  }
  RecordProperty("torn_tails", torn_tails);
}

// Any truncation of a valid journal reads cleanly, dropping only the cut line; a flipped byte
// either reads or fails with a message that names the file, and never leaves a half line behind.
TEST_F(ResultsJournal, RandomTruncationsAndCorruptionsReadCleanlyOrNameTheFile) {
  make_journal(6, 40);
  const std::string valid = read_text(path_);
  std::vector<size_t> ends;  // where each whole line ends
  for (size_t nl = valid.find('\n'); nl != std::string::npos; nl = valid.find('\n', nl + 1)) ends.push_back(nl + 1);
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    const size_t cut = std::uniform_int_distribution<size_t>(0, valid.size())(rng);
    SCOPED_TRACE("cut at " + std::to_string(cut));
    write_text(path_, valid.substr(0, cut));
    const size_t whole = std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin();
    auto j = Journal::open(path_, smoke_run(), true);
    EXPECT_EQ(j->decided().size(), whole == 0 ? 0 : whole - 1);
    j.reset();
    expect_clean(path_);
  }
  for (int round = 0; round < 300; ++round) {
    std::string text = valid;
    const size_t at = std::uniform_int_distribution<size_t>(0, text.size() - 1)(rng);
    text[at] = "\n\"{}x\0,:]"[std::uniform_int_distribution<int>(0, 8)(rng)];
    SCOPED_TRACE("byte " + std::to_string(at));
    write_text(path_, text);
    try {
      Journal::open(path_, smoke_run(), true);
      expect_clean(path_);
    } catch (const std::runtime_error& e) { EXPECT_EQ(std::string(e.what()).rfind(path_ + ":", 0), 0u) << e.what(); }
  }
}

}  // namespace
}  // namespace kg::results

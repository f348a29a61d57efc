// End-to-end: what kernelgate writes and prints survives any bytes a submission holds. Non-UTF-8
// compiler messages, exception texts and folder names are escaped in results.json (never an abort
// that loses every result), control characters never reach the terminal, a previous run's
// results.json is gone before a new run starts, a full disk leaves no partial file, and an empty
// submission says so.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "e2e_util.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kg::e2e;

namespace {

std::string correct_source(const std::string& folder) {
  return read(fs::path(KG_SOURCE_DIR) / "examples" / "correct" / folder / (folder + "_implementation.cpp"));
}

// The bytes a terminal acts on: ESC, CR, backspace, C1 CSI.
bool has_terminal_control(const std::string& s) {
  for (char c : s)
    if (c == '\x1b' || c == '\r' || c == '\b' || static_cast<unsigned char>(c) == 0x9b) return true;
  return false;
}

// One submission evaluated once: a correct op beside three whose compiler output, source file name
// and thrown message carry bytes that are not UTF-8 or that a terminal would obey.
class HostileBytes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::path sub = temp_dir("out-hostile");
    write(sub / "relu__default" / "relu__default_implementation.cpp", correct_source("relu__default"));
    write(sub / "mul__Tensor" / "mul__Tensor_implementation.cpp", "#error bytes \xff\xfe here\n");
    write(sub / "mm__default" / "mm__default_implementation\xff\xfe.cpp", "this is not C++\n");
    write(sub / "add__Tensor" / "add__Tensor_implementation.cpp",
          std::string("#include <ATen/ATen.h>\n"
                      "at::Tensor add__Tensor_kernel_impl(const at::Tensor& a, const at::Tensor&, const at::Scalar&) {\n"
                      "  TORCH_CHECK(false, \"\\xff\\xfe ") +
              "\\x1b[2J\\rrelu.default  pass" + "\");\n  return a;\n}\n");
    out_ = new fs::path(temp_dir("out-hostile-out"));
    result_ = new CommandResult(run("eval " + sub.string() + " --seed 5 --no-timing --out " + out_->string()));
  }
  static void TearDownTestSuite() {
    delete out_;
    delete result_;
  }
  static fs::path* out_;
  static CommandResult* result_;
};
fs::path* HostileBytes::out_ = nullptr;
CommandResult* HostileBytes::result_ = nullptr;

TEST_F(HostileBytes, ResultsJsonIsWrittenAndParsesWithTheBytesEscaped) {
  ASSERT_EQ(result_->status, 1) << result_->output;
  const std::string text = read(*out_ / "results.json");
  ASSERT_FALSE(text.empty()) << "no results.json: " << result_->output;
  json res;
  ASSERT_NO_THROW(res = json::parse(text)) << text;  // nlohmann rejects invalid UTF-8 in strings
  ASSERT_EQ(
      std::system(
          ("python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))' " + (*out_ / "results.json").string()).c_str()),
      0);
  const json* mul = find_op(res, "mul.Tensor");
  ASSERT_NE(mul, nullptr) << res.dump(2);
  EXPECT_NE(mul->dump().find("bytes \\\\xff\\\\xfe here"), std::string::npos) << mul->dump(2);
  const json* add = find_op(res, "add.Tensor");
  ASSERT_NE(add, nullptr) << res.dump(2);
  EXPECT_EQ((*add)["verdict"], "fail") << add->dump(2);
  EXPECT_NE(add->dump().find("\\\\xff\\\\xfe"), std::string::npos) << add->dump(2);
  // The mm folder's source file name: reported as the compile error's file, or refused by name.
  EXPECT_NE(res.dump().find("mm__default_implementation\\\\xff\\\\xfe.cpp"), std::string::npos) << res.dump(2);
  ASSERT_TRUE(res.contains("non_utf8_escaped")) << "the document says it was changed";
  EXPECT_NE(res["non_utf8_escaped"]["note"].get<std::string>().find("\\xNN"), std::string::npos);
  EXPECT_FALSE(res["non_utf8_escaped"]["fields"].empty());
}

TEST_F(HostileBytes, TheCorrectOpKeepsItsResult) {
  const json res = json::parse(read(*out_ / "results.json"));
  const json* relu = find_op(res, "relu.default");
  ASSERT_NE(relu, nullptr) << res.dump(2);
  EXPECT_EQ((*relu)["verdict"], "pass") << relu->dump(2);
}

TEST_F(HostileBytes, NoControlCharacterOrInvalidByteReachesTheTerminal) {
  EXPECT_FALSE(has_terminal_control(result_->output))
      << json(std::string(result_->output)).dump(0, ' ', true, json::error_handler_t::replace);
  EXPECT_EQ(result_->output.find('\xff'), std::string::npos);
  EXPECT_NE(result_->output.find("\\x1b[2J\\x0drelu.default  pass"), std::string::npos) << "the message is shown, escaped";
}

TEST(OutputSafety, SubmissionFolderNameThatIsNotUtf8) {
  fs::path parent = temp_dir("out-name");
  fs::path sub = parent / "sub-\xff\xfe";
  write(sub / "relu__default" / "relu__default_implementation.cpp", correct_source("relu__default"));
  fs::path out = temp_dir("out-name-out");
  CommandResult r = run("eval '" + sub.string() + "' --seed 5 --no-timing --out " + out.string());
  EXPECT_EQ(r.status, 0) << r.output;
  json res;
  ASSERT_NO_THROW(res = json::parse(read(out / "results.json"))) << r.output;
  EXPECT_EQ(res["submission"], (parent / "sub-\\xff\\xfe").string());
  EXPECT_EQ(res["ops"][0]["verdict"], "pass") << res.dump(2);
  const json& fields = res["non_utf8_escaped"]["fields"];
  EXPECT_NE(std::find(fields.begin(), fields.end(), "/submission"), fields.end()) << res.dump(2);
}

TEST(OutputSafety, PreviousResultsAreGoneBeforeTheRunAndReplacedAfter) {
  fs::path out = temp_dir("out-stale");
  const std::string stale = "{\"submission\": \"/elsewhere/another-submission\", \"ops\": []}\n";
  write(out / "results.json", stale);
  write(out / "feedback.md", "another submission's feedback\n");
  // A run that stops at its configuration (unknown suite) after the previous results are removed.
  CommandResult bad = run("eval " KG_SOURCE_DIR "/examples/correct --suite no-such-suite --feedback " + (out / "feedback.md").string() +
                          " --out " + out.string());
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_FALSE(fs::exists(out / "results.json")) << "a stale results.json survived a run that wrote none";
  EXPECT_FALSE(fs::exists(out / "feedback.md"));
  // A run that completes writes its own.
  write(out / "results.json", stale);
  CommandResult ok = run("eval " KG_SOURCE_DIR "/examples/correct --ops relu.default --seed 5 --no-timing --out " + out.string());
  EXPECT_EQ(ok.status, 0) << ok.output;
  const json res = json::parse(read(out / "results.json"));
  EXPECT_EQ(res["submission"], KG_SOURCE_DIR "/examples/correct");
  for (const auto& e : fs::directory_iterator(out))
    EXPECT_EQ(e.path().filename().string().find(".results.json.tmp"), std::string::npos) << e.path();
}

// A tmpfs of 64 KiB (room for results.json, the summaries and report.html once emptied), filled to
// the last block, as OUT (its build/ folder bound to an ordinary one).
class FullDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
    base_ = temp_dir("out-full");
    out_ = base_ / "out";
    build_ = base_ / "build";
    fs::create_directories(out_);
    fs::create_directories(build_);
    if (::mount("tmpfs", out_.c_str(), "tmpfs", 0, "size=64k") != 0) GTEST_SKIP() << "mount tmpfs: " << std::strerror(errno);
    mounted_ = true;
    fs::create_directories(out_ / "build");
    ASSERT_EQ(::mount(build_.c_str(), (out_ / "build").c_str(), nullptr, MS_BIND, nullptr), 0) << std::strerror(errno);
    bound_ = true;
    std::ofstream fill(out_ / "filler", std::ios::binary);
    const std::string block(4096, 'x');
    for (int i = 0; i < 64 && fill.write(block.data(), block.size()) && fill.flush(); ++i) {}
  }
  void TearDown() override {
    if (bound_) ::umount((out_ / "build").c_str());
    if (mounted_) ::umount(out_.c_str());
  }
  fs::path base_, out_, build_;
  bool mounted_ = false, bound_ = false;
};

TEST_F(FullDisk, NoTruncatedResultsAndTheErrorNamesThePath) {
  CommandResult r = run("eval " KG_SOURCE_DIR "/examples/correct --ops relu.default --seed 5 --no-timing --out " + out_.string());
  EXPECT_EQ(r.status, 2) << r.output;
  const fs::path results = out_ / "results.json";
  EXPECT_NE(r.output.find(results.string() + ": cannot write"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ENOSPC"), std::string::npos) << r.output;
  // This run's results could not be written whole: none, rather than a truncated one.
  EXPECT_FALSE(fs::exists(results)) << read(results);
  for (const auto& e : fs::directory_iterator(out_))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << "temporary file left: " << e.path();
}

TEST_F(FullDisk, ControlOnceThereIsRoomTheResultsAreWritten) {
  fs::remove(out_ / "filler");
  CommandResult r = run("eval " KG_SOURCE_DIR "/examples/correct --ops relu.default --seed 5 --no-timing --out " + out_.string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(json::parse(read(out_ / "results.json"))["ops"][0]["verdict"], "pass");
}

TEST(OutputSafety, EmptySubmissionSaysSo) {
  fs::path sub = temp_dir("out-empty");
  fs::create_directories(sub / "notes");
  write(sub / "README", "nothing here\n");
  fs::path out = temp_dir("out-empty-out");
  CommandResult r = run("eval " + sub.string() + " --no-timing --out " + out.string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find(sub.string() + ": no op folders (expected NAME__OVERLOAD/"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("seen notes: not an op folder name"), std::string::npos) << r.output;
  const json res = json::parse(read(out / "results.json"));
  EXPECT_TRUE(res["ops"].empty());
  EXPECT_EQ(res["problems"][0]["folder"], "notes");
}

TEST(OutputSafety, ControlCorrectExampleResultsKeepTheirShape) {
  fs::path out = temp_dir("out-shape");
  CommandResult r = run("eval " KG_SOURCE_DIR "/examples/correct --ops relu.default,add.Tensor --seed 7 --no-timing --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const json res = json::parse(read(out / "results.json"));
  EXPECT_FALSE(res.contains("non_utf8_escaped")) << "valid text is not marked as changed";
  for (const char* key :
       {"kernelgate_version", "torch_version", "device", "suite", "policy", "submission", "seed", "problems", "summary", "ops"})
    EXPECT_TRUE(res.contains(key)) << key;
  EXPECT_EQ(res["ops"].size(), 2u);
  for (const auto& o : res["ops"]) EXPECT_EQ(o["verdict"], "pass") << o.dump(2);
}

}  // namespace

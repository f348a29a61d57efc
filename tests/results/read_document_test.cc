// ResultsReadDocument: reading back a document kernelgate wrote, and the errors for everything
// else found where one belongs, each naming the file and the problem.
#include "kernelgate/results.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace kg::results {
namespace {

namespace fs = std::filesystem;

class ResultsReadDocument : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kg-results-read-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string file(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // The message read_document throws for `path`; "" when it does not throw.
  static std::string error_of(const std::string& path) {
    try {
      read_document(path);
    } catch (const std::runtime_error& e) { return e.what(); }
    return "";
  }

  fs::path dir_;
};

TEST_F(ResultsReadDocument, ReadsAnObject) {
  const json doc = {{"ops", json::array({{{"op", "relu"}, {"verdict", "PASS"}}})}, {"seed", 18446744073709551615ULL}};
  const json back = read_document(file("results.json", doc.dump(2)));
  EXPECT_EQ(back, doc);
  EXPECT_EQ(back["seed"].get<uint64_t>(), 18446744073709551615ULL);
}

TEST_F(ResultsReadDocument, MissingFileNamesThePathAndTheReason) {
  const std::string path = (dir_ / "absent.json").string();
  const std::string e = error_of(path);
  EXPECT_EQ(e, path + ": cannot open: No such file or directory");
}

TEST_F(ResultsReadDocument, NotJsonNamesTheByte) {
  const std::string path = file("summary.json", "{\"ops\": [1, 2,, 3]}");
  const std::string e = error_of(path);
  EXPECT_EQ(e.rfind(path + ": not JSON at byte 15: ", 0), 0u) << e;
  EXPECT_EQ(e.find("json.exception"), std::string::npos) << e;
}

TEST_F(ResultsReadDocument, HalfWrittenFileIsNotJson) {
  const std::string whole = json{{"ops", json::array()}, {"summary", {{"ops", 0}}}}.dump(2);
  const std::string path = file("results.json", whole.substr(0, whole.size() / 2));
  EXPECT_EQ(error_of(path).rfind(path + ": not JSON at byte ", 0), 0u) << error_of(path);
}

TEST_F(ResultsReadDocument, EmptyFileIsNotJson) {
  const std::string path = file("empty.json", "");
  EXPECT_EQ(error_of(path).rfind(path + ": not JSON at byte ", 0), 0u) << error_of(path);
}

TEST_F(ResultsReadDocument, OtherJsonIsNotAnObject) {
  EXPECT_EQ(error_of(file("array.json", "[1, 2]")), (dir_ / "array.json").string() + ": not a JSON object (got array)");
  EXPECT_EQ(error_of(file("string.json", "\"PASS\"")), (dir_ / "string.json").string() + ": not a JSON object (got string)");
}

TEST_F(ResultsReadDocument, FolderIsNotARegularFile) {
  fs::create_directories(dir_ / "results.json");
  EXPECT_EQ(error_of((dir_ / "results.json").string()), (dir_ / "results.json").string() + ": not a regular file");
}

TEST_F(ResultsReadDocument, FifoIsRefusedWithoutBlocking) {
  const std::string path = (dir_ / "fifo.json").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(error_of(path), path + ": not a regular file");
}

TEST_F(ResultsReadDocument, UnreadableFileNamesTheReason) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a file whatever its mode";
  const std::string path = file("secret.json", "{}");
  fs::permissions(path, fs::perms::none);
  EXPECT_EQ(error_of(path), path + ": cannot open: Permission denied");
}

}  // namespace
}  // namespace kg::results

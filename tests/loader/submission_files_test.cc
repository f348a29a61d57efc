// SubmissionFiles*: the supervisor reads a submission with nothing followed. Each test plants the
// real thing (symbolic links to a secret file and to /proc/self/environ, a FIFO, a socket, a
// device node, a hard link, a sparse 2 GiB file, a link loop) and checks that the scan and the
// build refuse it by its path and type, without reading through it, and that other ops go on.
#include "submission_files.h"
#include "loader_test_util.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace kg::loader;
using namespace kg::loader::test;

namespace {

const char* kSecret = "KG-SECRET-7f3a9c-do-not-leak";
const char* kRelu = "#include <ATen/ATen.h>\nat::Tensor relu__default_kernel_impl(const at::Tensor& self) { return self.clamp_min(0); }\n";

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// An honest relu__default folder with `data.bin` pulled in by the source.
fs::path relu_folder(const TempDir& d) {
  const fs::path f = fs::path(d.path) / "sub" / "relu__default";
  write(f / "relu__default_implementation.cpp", std::string("#include \"data.bin\"\n") + kRelu);
  return f;
}

const OpFolder* find(const ScanResult& s, const std::string& op) {
  for (const auto& f : s.ops)
    if (f.op == op) return &f;
  return nullptr;
}

// Scans DIR/sub, builds `op` (it must be found) and returns the build's error.
std::string build_error(const TempDir& d, const std::string& op) {
  const ScanResult scan = scan_submission(d.path + "/sub");
  const OpFolder* f = find(scan, op);
  if (!f) return "not scanned: " + op;
  BuildResult r = build(*f, options(d.path + "/sub"));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.log.find(kSecret), std::string::npos) << r.log;
  return r.error;
}

long max_rss_kib() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

TEST(SubmissionFiles, DataFileLinkedToASecretIsRefusedAndNotRead) {
  TempDir d;
  const fs::path secret = fs::path(d.path) / "shadow";
  write(secret, kSecret);
  fs::create_symlink(secret, relu_folder(d) / "data.bin");
  const std::string err = build_error(d, "relu.default");
  EXPECT_EQ(err, "relu__default/data.bin: a symbolic link (to " + secret.string() +
                     "); submissions may hold only regular files and directories");
  EXPECT_EQ(err.find(kSecret), std::string::npos);
}

TEST(SubmissionFiles, DataFileLinkedToTheSupervisorsEnvironmentIsRefused) {
  ::setenv("KG_TEST_ENV_SECRET", kSecret, 1);
  TempDir d;
  fs::create_symlink("/proc/self/environ", relu_folder(d) / "data.bin");
  const std::string err = build_error(d, "relu.default");
  EXPECT_NE(err.find("relu__default/data.bin: a symbolic link (to /proc/self/environ)"), std::string::npos) << err;
  EXPECT_EQ(err.find(kSecret), std::string::npos);
  ::unsetenv("KG_TEST_ENV_SECRET");
}

TEST(SubmissionFiles, OpFolderThatIsALinkToAnotherDirectoryIsRefused) {
  TempDir d;
  write(fs::path(d.path) / "someone-else" / "relu__default" / "relu__default_implementation.cpp", kRelu);
  fs::create_directories(fs::path(d.path) / "sub");
  fs::create_symlink(fs::path(d.path) / "someone-else" / "relu__default", fs::path(d.path) / "sub" / "relu__default");
  const ScanResult scan = scan_submission(d.path + "/sub");
  const OpFolder* f = find(scan, "relu.default");
  ASSERT_NE(f, nullptr) << "the op is listed, to fail with the reason";
  EXPECT_TRUE(f->source.empty()) << "nothing is looked up through the link";
  EXPECT_EQ(build_error(d, "relu.default"), "relu__default: a symbolic link (to " +
                                                (fs::path(d.path) / "someone-else" / "relu__default").string() +
                                                "); submissions may hold only regular files and directories");
}

TEST(SubmissionFiles, SourceThatIsALinkIsRefusedByItsName) {
  TempDir d;
  write(fs::path(d.path) / "elsewhere.cpp", kRelu);
  const fs::path f = fs::path(d.path) / "sub" / "relu__default";
  fs::create_directories(f);
  fs::create_symlink(fs::path(d.path) / "elsewhere.cpp", f / "relu__default_implementation.cpp");
  const std::string err = build_error(d, "relu.default");
  EXPECT_NE(err.find("relu__default/relu__default_implementation.cpp: a symbolic link (to "), std::string::npos) << err;
}

TEST(SubmissionFiles, DanglingLinkAsSourceNamesTheLinkNotTheFolder) {
  TempDir d;
  const fs::path f = fs::path(d.path) / "sub" / "relu__default";
  fs::create_directories(f);
  fs::create_symlink("/nonexistent/kg-dangling", f / "relu__default_implementation.cpp");
  const ScanResult scan = scan_submission(d.path + "/sub");
  EXPECT_TRUE(scan.problems.empty()) << scan.problems.front().second;
  EXPECT_EQ(build_error(d, "relu.default"),
            "relu__default/relu__default_implementation.cpp: a symbolic link (to /nonexistent/kg-dangling); submissions may hold "
            "only regular files and directories");
}

TEST(SubmissionFiles, LinkToDevZeroAsSourceNamesItsType) {
  TempDir d;
  const fs::path f = fs::path(d.path) / "sub" / "relu__default";
  fs::create_directories(f);
  fs::create_symlink("/dev/zero", f / "relu__default_implementation.cpp");
  EXPECT_NE(build_error(d, "relu.default").find("relu__default_implementation.cpp: a symbolic link (to /dev/zero)"), std::string::npos);
}

TEST(SubmissionFiles, FifoSourceIsRefusedWithoutHanging) {
  TempDir d;
  const fs::path f = fs::path(d.path) / "sub" / "relu__default";
  fs::create_directories(f);
  ASSERT_EQ(::mkfifo((f / "relu__default_implementation.cpp").c_str(), 0644), 0);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(build_error(d, "relu.default"),
            "relu__default/relu__default_implementation.cpp: a FIFO; submissions may hold only regular files and directories");
  // Read directly too: refused from lstat, before an open that could wait for a writer.
  const auto dir = submission::Dir::open_root(d.path + "/sub").open_folder("relu__default");
  EXPECT_THROW(dir.read("relu__default_implementation.cpp", 1024, "limit"), submission::FileError);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST(SubmissionFiles, SocketAndDeviceNodeAreRefused) {
  TempDir d;
  const fs::path f = relu_folder(d);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock = (f / "data.bin").string();
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  std::copy(sock.begin(), sock.end(), addr.sun_path);
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(build_error(d, "relu.default"), "relu__default/data.bin: a socket; submissions may hold only regular files and directories");
  ::close(s);
  fs::remove(f / "data.bin");
  if (::mknod((f / "data.bin").c_str(), S_IFCHR | 0644, makedev(1, 5)) != 0) GTEST_SKIP() << "mknod needs CAP_MKNOD";
  EXPECT_EQ(build_error(d, "relu.default"),
            "relu__default/data.bin: a character device; submissions may hold only regular files and directories");
}

TEST(SubmissionFiles, HardLinkedSourceIsRefused) {
  TempDir d;
  write(fs::path(d.path) / "someone-elses.cpp", kRelu);
  const fs::path f = fs::path(d.path) / "sub" / "relu__default";
  fs::create_directories(f);
  fs::create_hard_link(fs::path(d.path) / "someone-elses.cpp", f / "relu__default_implementation.cpp");
  EXPECT_EQ(build_error(d, "relu.default"),
            "relu__default/relu__default_implementation.cpp: a regular file with 2 hard links; submissions may hold only regular files "
            "and directories");
}

TEST(SubmissionFiles, SparseTwoGiBFileIsRefusedFromItsSizeWithoutReading) {
  TempDir d;
  const fs::path big = relu_folder(d) / "data.bin";
  { std::ofstream(big).put('x'); }
  fs::resize_file(big, 2ull << 30);
  const long rss0 = max_rss_kib();
  const auto t0 = std::chrono::steady_clock::now();
  const std::string err = build_error(d, "relu.default");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long grown_kib = max_rss_kib() - rss0;
  const uintmax_t listed = fs::file_size(big) + fs::file_size(big.parent_path() / "relu__default_implementation.cpp");
  EXPECT_EQ(err, "relu__default: files of " + std::to_string(listed) + " bytes in all, over the 16 MiB an op folder may hold");
  EXPECT_LT(seconds, 1.0);
  EXPECT_LT(grown_kib, 64 * 1024) << "peak memory grew by " << grown_kib << " KiB";
  std::printf("sparse 2 GiB file refused in %.4f s, peak RSS grew by %ld KiB\n", seconds, grown_kib);
  // The fd path checks the size before reading as well (a file that grew after the listing).
  const auto dir = submission::Dir::open_root(d.path + "/sub").open_folder("relu__default");
  EXPECT_THROW(dir.read("data.bin", 16u << 20, "16 MiB"), submission::FileError);
}

TEST(SubmissionFiles, LinkLoopFailsOnlyItsOpAndTheOtherOpIsRead) {
  TempDir d;
  const fs::path sub = fs::path(d.path) / "sub";
  write(sub / "relu__default" / "relu__default_implementation.cpp", kRelu);
  fs::create_symlink("loop", sub / "relu__default" / "loop");  // a link to itself: ELOOP when followed
  fs::create_symlink("mm__default", sub / "mm__default");      // an op folder that loops
  write(sub / "add__Tensor" / "add__Tensor_implementation.cpp",
        "#include <ATen/ATen.h>\nat::Tensor add__Tensor_kernel_impl(const at::Tensor& a, const at::Tensor& b, const at::Scalar& alpha) {\n"
        "  return a + b * alpha;\n}\n");
  const ScanResult scan = scan_submission(sub.string());
  ASSERT_EQ(scan.ops.size(), 3u);
  ASSERT_NE(find(scan, "add.Tensor"), nullptr);
  EXPECT_EQ(build_error(d, "mm.default"),
            "mm__default: a symbolic link (to mm__default); submissions may hold only regular files and directories");
  EXPECT_EQ(build_error(d, "relu.default"),
            "relu__default/loop: a symbolic link (to loop); submissions may hold only regular files and directories");
  BuildResult add = build(*find(scan, "add.Tensor"), options(sub.string()));
  EXPECT_TRUE(add.ok) << add.error;
}

TEST(SubmissionFiles, RootMayBeALinkAndNonOpLinksAreListedAsProblems) {
  TempDir d;
  const fs::path sub = fs::path(d.path) / "sub";
  write(sub / "relu__default" / "relu__default_implementation.cpp", kRelu);
  fs::create_symlink("/etc", sub / "notes");
  fs::create_symlink(sub, fs::path(d.path) / "link-to-sub");
  const ScanResult scan = scan_submission(d.path + "/link-to-sub");
  ASSERT_EQ(scan.ops.size(), 1u);
  EXPECT_FALSE(scan.ops[0].source.empty());
  ASSERT_EQ(scan.problems.size(), 1u);
  EXPECT_EQ(scan.problems[0].second, "notes: a symbolic link (to /etc); submissions may hold only regular files and directories");
}

TEST(SubmissionFiles, RegularFilesAreReadWhole) {
  TempDir d;
  write(fs::path(d.path) / "f" / "a.bin", std::string("bytes\0with nul", 14));
  fs::create_directories(fs::path(d.path) / "f" / "subfolder");
  const auto root = submission::Dir::open_root(d.path);
  const auto folder = root.open_folder("f");
  EXPECT_EQ(folder.read("a.bin", 14, "limit"), std::string("bytes\0with nul", 14));
  EXPECT_THROW(folder.read("a.bin", 13, "limit"), submission::FileError);
  const auto entries = folder.list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "a.bin");
  EXPECT_EQ(entries[0].type, static_cast<mode_t>(S_IFREG));
  EXPECT_EQ(entries[1].type, static_cast<mode_t>(S_IFDIR));
  EXPECT_THROW(root.open_folder("missing"), submission::FileError);
}

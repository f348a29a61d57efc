// E2ESubmissionFiles: `kernelgate eval` on submissions that plant links, FIFOs, hard links and a
// sparse file to make the (unsandboxed) supervisor read what is not theirs. Each is refused by
// its path and type, only its op fails, and no byte of the target reaches results.json. The
// controls show that the same probe does see the bytes of a file the submission really holds.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "e2e_util.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kg::e2e;

namespace {

// An identifier, so that a compiler error quoting it carries it whole.
const char* kSecret = "KG_SECRET_4b1e0d_do_not_leak";

struct Outcome {
  int status = -1;
  std::string output;
  double seconds = 0;
  long max_rss_kib = 0;  // the kernelgate process's peak, from wait4
};

// Runs kernelgate with `args` (and `env` added), its own rusage measured.
Outcome kernelgate(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  const fs::path log = fs::temp_directory_path() / ("kg-e2e-files-log-" + std::to_string(::getpid()));
  std::vector<std::string> argv = {KG_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) ::_exit(127);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  Outcome o;
  int st = 0;
  rusage u{};
  if (pid > 0 && ::wait4(pid, &st, 0, &u) == pid) {
    o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    o.max_rss_kib = u.ru_maxrss;
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream f(log);
  o.output.assign(std::istreambuf_iterator<char>(f), {});
  fs::remove(log);
  return o;
}

fs::path example(const std::string& folder) { return fs::path(KG_SOURCE_DIR) / "examples" / "correct" / folder; }

// Evaluates `sub` (only `ops`), returns results.json's text; the exit status must be `status`.
std::string eval(const fs::path& sub, const std::string& ops, int status, const std::vector<std::string>& env = {},
                 Outcome* outcome = nullptr) {
  const fs::path out = temp_dir("files-" + sub.filename().string() + "-out");
  Outcome o = kernelgate({"eval", sub.string(), "--ops", ops, "--no-timing", "--seed", "5", "--out", out.string()}, env);
  EXPECT_EQ(o.status, status) << o.output;
  if (outcome) *outcome = o;
  return read(out / "results.json");
}

json op_of(const std::string& results, const std::string& op) {
  const json res = json::parse(results);
  for (const auto& o : res["ops"])
    if (o["op"] == op) return o;
  ADD_FAILURE() << "no " << op << " in " << results;
  return json();
}

// The message of an op refused before its build: one compile_error failure carrying it.
std::string refusal_of(const std::string& results, const std::string& op) {
  const json o = op_of(results, op);
  EXPECT_EQ(o["verdict"], "fail") << o.dump(2);
  if (!o.contains("failures") || o["failures"].empty()) return "";
  EXPECT_EQ(o["failures"][0]["category"], "compile_error");
  return o["failures"][0]["evidence"]["message"];
}

// relu__default whose source compiles `data.bin` in with `how` (an #include or an .incbin).
fs::path relu_pulling_in(const std::string& name, const std::string& how) {
  const fs::path sub = temp_dir("files-" + name);
  write(sub / "relu__default" / "relu__default_implementation.cpp",
        how + "\n" + read(example("relu__default") / "relu__default_implementation.cpp"));
  return sub;
}

const std::string kRefused = "; submissions may hold only regular files and directories";

}  // namespace

TEST(E2ESubmissionFiles, IncludeOfALinkToASecretFileLeaksNothing) {
  const fs::path secret = temp_dir("files-secret") / "shadow";
  write(secret, std::string(kSecret) + "\n");
  const fs::path sub = relu_pulling_in("include-link", "#include \"data.bin\"");
  fs::create_symlink(secret, sub / "relu__default" / "data.bin");
  const std::string results = eval(sub, "relu.default", 1);
  EXPECT_EQ(results.find(kSecret), std::string::npos) << results;
  EXPECT_EQ(refusal_of(results, "relu.default"), "relu__default/data.bin: a symbolic link (to " + secret.string() + ")" + kRefused);

  // Control: the same file really in the folder is compiled, and the probe sees its bytes.
  fs::remove(sub / "relu__default" / "data.bin");
  fs::copy_file(secret, sub / "relu__default" / "data.bin");
  const std::string own = eval(sub, "relu.default", 1);
  EXPECT_NE(own.find(kSecret), std::string::npos) << "the control's compile error quotes the file: " << own;
}

TEST(E2ESubmissionFiles, IncludeOfALinkToEtcShadowLeaksNothing) {
  const std::string shadow = read("/etc/shadow");
  const std::string first_line = shadow.substr(0, shadow.find('\n'));
  if (first_line.size() < 4) GTEST_SKIP() << "/etc/shadow is not readable here";
  const fs::path sub = relu_pulling_in("shadow-link", "#include \"data.bin\"");
  fs::create_symlink("/etc/shadow", sub / "relu__default" / "data.bin");
  const std::string results = eval(sub, "relu.default", 1);
  EXPECT_EQ(results.find(first_line), std::string::npos);
  EXPECT_EQ(refusal_of(results, "relu.default"), "relu__default/data.bin: a symbolic link (to /etc/shadow)" + kRefused);
}

TEST(E2ESubmissionFiles, IncbinOfTheSupervisorsEnvironmentLeaksNothing) {
  const fs::path sub = relu_pulling_in("environ-link", "__asm__(\".section .rodata\\n.incbin \\\"data.bin\\\"\\n.previous\");");
  fs::create_symlink("/proc/self/environ", sub / "relu__default" / "data.bin");
  const std::string results = eval(sub, "relu.default", 1, {std::string("KG_E2E_SECRET=") + kSecret});
  EXPECT_EQ(results.find(kSecret), std::string::npos) << results;
  EXPECT_EQ(refusal_of(results, "relu.default"), "relu__default/data.bin: a symbolic link (to /proc/self/environ)" + kRefused);
}

TEST(E2ESubmissionFiles, OpFolderLinkedToAnotherSubmissionIsNotJudgedAsItsOwn) {
  const fs::path sub = temp_dir("files-folder-link");
  fs::create_symlink(example("relu__default"), sub / "relu__default");
  fs::create_directories(sub / "add__Tensor");
  fs::copy_file(example("add__Tensor") / "add__Tensor_implementation.cpp", sub / "add__Tensor" / "add__Tensor_implementation.cpp");
  const std::string results = eval(sub, "relu.default,add.Tensor", 1);
  EXPECT_EQ(refusal_of(results, "relu.default"),
            "relu__default: a symbolic link (to " + example("relu__default").string() + ")" + kRefused);
  EXPECT_EQ(op_of(results, "add.Tensor")["verdict"], "pass") << "the honest op beside it still passes";
}

TEST(E2ESubmissionFiles, SourceThatIsALinkIsRefused) {
  const fs::path sub = temp_dir("files-source-link");
  fs::create_directories(sub / "relu__default");
  fs::create_symlink(example("relu__default") / "relu__default_implementation.cpp",
                     sub / "relu__default" / "relu__default_implementation.cpp");
  const std::string msg = refusal_of(eval(sub, "relu.default", 1), "relu.default");
  EXPECT_EQ(msg.rfind("relu__default/relu__default_implementation.cpp: a symbolic link (to ", 0), 0u) << msg;
}

TEST(E2ESubmissionFiles, FifoSourceIsRefusedWithoutHanging) {
  const fs::path sub = temp_dir("files-fifo");
  fs::create_directories(sub / "relu__default");
  ASSERT_EQ(::mkfifo((sub / "relu__default" / "relu__default_implementation.cpp").c_str(), 0644), 0);
  Outcome o;
  const std::string results = eval(sub, "relu.default", 1, {}, &o);
  EXPECT_EQ(refusal_of(results, "relu.default"), "relu__default/relu__default_implementation.cpp: a FIFO" + kRefused);
  EXPECT_LT(o.seconds, 60.0);
}

TEST(E2ESubmissionFiles, HardLinkedSourceIsRefused) {
  const fs::path sub = temp_dir("files-hard-link");
  const fs::path theirs = temp_dir("files-hard-link-theirs") / "relu.cpp";
  fs::copy_file(example("relu__default") / "relu__default_implementation.cpp", theirs);
  fs::create_directories(sub / "relu__default");
  fs::create_hard_link(theirs, sub / "relu__default" / "relu__default_implementation.cpp");
  EXPECT_EQ(refusal_of(eval(sub, "relu.default", 1), "relu.default"),
            "relu__default/relu__default_implementation.cpp: a regular file with 2 hard links" + kRefused);
}

TEST(E2ESubmissionFiles, SparseTwoGiBFileIsRefusedFastWithLittleMemory) {
  const fs::path sub = temp_dir("files-sparse");
  fs::create_directories(sub / "relu__default");
  fs::copy_file(example("relu__default") / "relu__default_implementation.cpp", sub / "relu__default" / "relu__default_implementation.cpp");
  const fs::path big = sub / "relu__default" / "weights.bin";
  std::ofstream(big).put('w');
  fs::resize_file(big, 2ull << 30);
  Outcome o;
  const std::string msg = refusal_of(eval(sub, "relu.default", 1, {}, &o), "relu.default");
  EXPECT_NE(msg.find("over the 16 MiB an op folder may hold"), std::string::npos) << msg;
  // Reading it whole took 4.4 GB and 19 s; a refusal from its size takes kernelgate's own start-up.
  EXPECT_LT(o.max_rss_kib, 1024 * 1024) << "peak RSS " << o.max_rss_kib << " KiB";
  EXPECT_LT(o.seconds, 15.0);
  std::printf("sparse 2 GiB file: kernelgate eval took %.2f s, peak RSS %ld KiB\n", o.seconds, o.max_rss_kib);
}

TEST(E2ESubmissionFiles, LinkLoopInOneFolderFailsOnlyThatOp) {
  const fs::path sub = temp_dir("files-loop");
  fs::create_directories(sub / "relu__default");
  fs::copy_file(example("relu__default") / "relu__default_implementation.cpp", sub / "relu__default" / "relu__default_implementation.cpp");
  fs::create_symlink("loop", sub / "relu__default" / "loop");
  fs::create_symlink("mm__default", sub / "mm__default");
  fs::create_directories(sub / "add__Tensor");
  fs::copy_file(example("add__Tensor") / "add__Tensor_implementation.cpp", sub / "add__Tensor" / "add__Tensor_implementation.cpp");
  const std::string results = eval(sub, "relu.default,mm.default,add.Tensor", 1);
  EXPECT_EQ(refusal_of(results, "relu.default"), "relu__default/loop: a symbolic link (to loop)" + kRefused);
  EXPECT_EQ(refusal_of(results, "mm.default"), "mm__default: a symbolic link (to mm__default)" + kRefused);
  EXPECT_EQ(op_of(results, "add.Tensor")["verdict"], "pass");
}

TEST(E2ESubmissionFiles, SubmissionRootGivenAsALinkIsFollowed) {
  const fs::path link = temp_dir("files-root-link") / "correct";
  fs::create_symlink(fs::path(KG_SOURCE_DIR) / "examples" / "correct", link);
  const std::string results = eval(link, "relu.default", 0);
  EXPECT_EQ(op_of(results, "relu.default")["verdict"], "pass") << results;
}

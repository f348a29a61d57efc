#include "loader_test_util.h"

#include <cstdio>

#include "kg_build_config.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace fs = std::filesystem;

namespace kg::loader::test {

TempDir::TempDir() {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t && *t ? t : "/tmp") + "/kg-loader-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) std::abort();
  path = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  kg::loader::remove_tree(fs::path(path).string(), ec);
}

BuiltRelu::BuiltRelu(const std::string& source) {
  op = make_op(dir.path, "relu.default", {{"relu__default_implementation.cpp", source}});
  built = build(op, options(dir.path));
}

OpFolder make_op(const std::string& dir, const std::string& op, const std::map<std::string, std::string>& files) {
  fs::path d = fs::path(dir) / folder_for_op(op);
  fs::create_directories(d);
  for (const auto& [name, text] : files) std::ofstream(d / name) << text;
  for (const auto& f : scan_submission(dir).ops)
    if (f.op == op) return f;
  throw std::runtime_error("make_op: " + op + " not found by scan_submission");
}

BuildOptions options(const std::string& submission_root) {
  BuildOptions o;
  o.submission_root = submission_root;
  o.cache_dir = KG_TEST_CACHE_DIR;
  o.work_dir = submission_root + "/.build";
  o.time_s = 300;
  return o;
}

bool gpu_available() {
  std::error_code ec;
  return KG_TORCH_CUDA && fs::exists("/dev/nvidiactl", ec);
}

std::string example_dir(const std::string& rel) { return std::string(KG_TEST_SOURCE_DIR) + "/examples/" + rel; }

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string all_diagnostics(const BuildResult& r) {
  std::string s = r.error + "\n";
  for (const auto& d : r.diagnostics)
    s += d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.severity + ": " + d.message + "\n";
  return s + r.log.substr(0, 4000);
}

std::string unique_tag() {
  static std::mt19937_64 rng(std::random_device{}());
  return "// unique " + std::to_string(rng()) + "\n";
}

std::string defined_symbols(const std::string& so) {
  std::string out;
  FILE* p = ::popen(("nm -D --defined-only --format=just-symbols '" + so + "' | sort").c_str(), "r");
  if (!p) return "";
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

}  // namespace kg::loader::test

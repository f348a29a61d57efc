// The python kind on the supervisor's side: which folders and files scan_submission takes and in
// which style (kernelgate's relu__default, BackendBench's relu), the entry names kg-runner looks
// for, the "build" (the checked source published as the artifact), `kernelgate init` stubs; and
// through RunnerClient, kg-runner's embedded interpreter in its sandbox: the dispatcher observer
// sees what a python kernel dispatches, and a bad source is the load's error with its traceback.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "kernelgate/loader.h"
#include "kernelgate/protocol.h"
#include "kernelgate/python_entry.h"
#include "kernelgate/remove_tree.h"
#include "kernelgate/rules.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fs = std::filesystem;
using kg::loader::Kind;

namespace {

// std::filesystem::remove_all's job: libtorch 2.x exports a broken copy of it (remove_tree.h).
void remove_tree(const fs::path& p) {
  std::error_code ec;
  kg::loader::remove_tree(p.string(), ec);
}

// A fresh submission folder per test.
class PythonKind : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kg-python-kind-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    remove_tree(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { remove_tree(dir_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::binary) << text;
  }
  const kg::loader::OpFolder* find(const kg::loader::ScanResult& s, const std::string& folder) {
    for (const auto& op : s.ops)
      if (op.folder == folder) return &op;
    return nullptr;
  }
  std::string problem(const kg::loader::ScanResult& s, const std::string& folder) {
    for (const auto& [f, why] : s.problems)
      if (f == folder) return why;
    return "";
  }
  fs::path dir_;
};

TEST_F(PythonKind, KindNameParses) {
  Kind k = Kind::Cpu;
  ASSERT_TRUE(kg::loader::parse_kind("python", &k));
  EXPECT_EQ(k, Kind::Python);
  EXPECT_STREQ(kg::loader::kind_name(Kind::Python), "python");
}

TEST_F(PythonKind, KernelgateFolderStyle) {
  write("relu__default/relu__default_implementation.py", "def relu__default_kernel_impl(x): return x\n");
  write("add___Tensor/add___Tensor_implementation.py", "def add__kernel_impl(x, y, alpha=1): return x\n");
  const auto s = kg::loader::scan_submission(dir_.string());
  ASSERT_TRUE(find(s, "relu__default"));
  EXPECT_EQ(find(s, "relu__default")->kind, Kind::Python);
  EXPECT_EQ(find(s, "relu__default")->op, "relu.default");
  ASSERT_TRUE(find(s, "add___Tensor"));
  EXPECT_EQ(find(s, "add___Tensor")->op, "add_.Tensor");
  EXPECT_TRUE(s.problems.empty());
}

// BackendBench names a folder after the op ("relu") and loads the first implementation file in
// sorted order; kernelgate takes that folder as the default overload and the same file.
TEST_F(PythonKind, BackendBenchFolderStyleTakesTheFirstSortedFile) {
  write("relu/relu_implementation_v2.py", "raise RuntimeError('not me')\n");
  write("relu/relu_implementation_v1.py", "def relu_kernel_impl(x): return x\n");
  write("relu/README.md", "# relu\n");
  const auto s = kg::loader::scan_submission(dir_.string());
  const auto* op = find(s, "relu");
  ASSERT_TRUE(op) << (s.problems.empty() ? "" : s.problems[0].second);
  EXPECT_EQ(op->op, "relu.default");
  EXPECT_EQ(op->kind, Kind::Python);
  EXPECT_EQ(fs::path(op->source).filename(), "relu_implementation_v1.py");
}

// Only a python source makes a bare name an op folder: other folders stay what they were.
TEST_F(PythonKind, BareNameWithoutPythonSourceIsNoOpFolder) {
  write("notes/todo.txt", "later\n");
  write("relu/relu_implementation.cpp", "// BackendBench's layout is for .py files\n");
  const auto s = kg::loader::scan_submission(dir_.string());
  EXPECT_TRUE(s.ops.empty());
  EXPECT_EQ(problem(s, "notes").rfind("not an op folder name", 0), 0u) << problem(s, "notes");
  EXPECT_EQ(problem(s, "relu").rfind("not an op folder name", 0), 0u) << problem(s, "relu");
}

TEST_F(PythonKind, PythonBesideCppIsAProblem) {
  write("relu__default/relu__default_implementation.py", "def relu__default_kernel_impl(x): return x\n");
  write("relu__default/relu__default_implementation.cpp", "// cpu\n");
  const auto s = kg::loader::scan_submission(dir_.string());
  EXPECT_FALSE(find(s, "relu__default"));
  const std::string why = problem(s, "relu__default");
  EXPECT_NE(why.find("holds both a python source (relu__default_implementation.py) and a C++ one"), std::string::npos) << why;
}

TEST_F(PythonKind, NoSourceProblemNamesEveryExtension) {
  write("relu__default/relu_implementation.py", "# a BackendBench file in a kernelgate-named folder\n");
  const auto s = kg::loader::scan_submission(dir_.string());
  EXPECT_EQ(problem(s, "relu__default"), "no relu__default_implementation*.cpp, *.cu or *.py file");
}

TEST_F(PythonKind, EntryNamesInLookupOrder) {
  using V = std::vector<std::string>;
  EXPECT_EQ(kg::protocol::python_entry_names("relu__default", "relu"), (V{"relu__default_kernel_impl", "relu_kernel_impl"}));
  EXPECT_EQ(kg::protocol::python_entry_names("relu", "relu"), (V{"relu_kernel_impl"}));
  EXPECT_EQ(kg::protocol::python_entry_names("add___Tensor", "add_"), (V{"add___Tensor_kernel_impl", "add__kernel_impl"}));
}

// No compiler runs: the source's bytes are the artifact, published through the cache.
TEST_F(PythonKind, BuildPublishesTheSource) {
  const std::string source = "import torch\n\ndef relu__default_kernel_impl(self):\n    return self  # " + dir_.string() + "\n";
  write("relu__default/relu__default_implementation.py", source);
  const auto s = kg::loader::scan_submission(dir_.string());
  ASSERT_EQ(s.ops.size(), 1u);
  kg::loader::BuildOptions o;
  o.cache_dir = KG_TEST_CACHE_DIR;
  const auto first = kg::loader::build(s.ops[0], o);
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_EQ(fs::path(first.artifact).filename(), "relu__default_implementation.py");
  std::ifstream in(first.artifact, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), source);
  const auto again = kg::loader::build(s.ops[0], o);
  ASSERT_TRUE(again.ok) << again.error;
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.artifact, first.artifact);
}

TEST_F(PythonKind, BuildRefusesBinaryAndNonUtf8Sources) {
  write("relu__default/relu__default_implementation.py", std::string("def f():\n    return 1\0\n", 23));
  write("mul__Tensor/mul__Tensor_implementation.py", "# caf\xe9 in Latin-1\n");
  const auto s = kg::loader::scan_submission(dir_.string());
  ASSERT_EQ(s.ops.size(), 2u);
  kg::loader::BuildOptions o;
  o.use_cache = false;
  o.work_dir = (dir_ / "work").string();
  for (const auto& op : s.ops) {
    const auto r = kg::loader::build(op, o);
    EXPECT_FALSE(r.ok) << op.folder;
    const std::string want = op.folder == "relu__default" ? "a NUL byte at offset 21" : "not UTF-8 (offset 5)";
    EXPECT_NE(r.error.find(want), std::string::npos) << r.error;
    EXPECT_NE(r.error.find(op.folder + "/" + op.folder + "_implementation.py"), std::string::npos) << r.error;
  }
}

// The stub names the entry, takes the schema's arguments with keyword-only ones after `*`, and
// fails every test honestly.
TEST_F(PythonKind, InitStub) {
  const std::string add = kg::loader::stub_source("add.Tensor", Kind::Python);
  EXPECT_NE(add.find("def add__Tensor_kernel_impl(self, other, *, alpha=1):"), std::string::npos) << add;
  EXPECT_NE(add.find("raise NotImplementedError"), std::string::npos) << add;
  const auto res = kg::loader::write_stubs(dir_.string(), {"relu.default"}, Kind::Python);
  ASSERT_EQ(res.written.size(), 1u);
  EXPECT_EQ(fs::path(res.written[0]).filename(), "relu__default_implementation.py");
  const auto s = kg::loader::scan_submission(dir_.string());
  ASSERT_EQ(s.ops.size(), 1u);
  EXPECT_EQ(s.ops[0].kind, Kind::Python);
}

// A python source built and loaded into a fresh runner; "" or the load's error.
class PythonRunner : public PythonKind {
 protected:
  std::string start(const std::string& source, bool list_extensions = false) {
    write("relu__default/relu__default_implementation.py", source);
    const auto s = kg::loader::scan_submission(dir_.string());
    EXPECT_EQ(s.ops.size(), 1u);
    if (s.ops.size() != 1) return "no op";
    kg::loader::BuildOptions o;
    o.cache_dir = KG_TEST_CACHE_DIR;
    const auto built = kg::loader::build(s.ops[0], o);
    EXPECT_TRUE(built.ok) << built.error;
    kg::loader::RunnerOptions ro;
    ro.runner_path = kg::loader::default_runner_path();
    ro.ro_binds = {fs::path(built.artifact).parent_path().string()};
    ro.limits.cpu_s = 60;
    ro.limits.wall_s = 60;
    ro.limits.memory_mb = 2048;
    runner_ = kg::loader::RunnerClient::start(ro);
    kg::loader::LoadRequest request = kg::loader::load_request(s.ops[0], built, kg::loader::Device::Cpu);
    request.list_extensions = list_extensions;
    return kg::loader::load_message(runner_->load(request));
  }
  // The operators the call dispatched that the fallback rule does not allow.
  std::vector<std::string> compute_ops(const kg::loader::CallOutcome& out) {
    std::vector<std::string> ops;
    for (const auto& d : out.dispatched)
      if (!kg::policy::dispatched_operator_allowed(d, "relu.default")) ops.push_back(d);
    return ops;
  }
  std::unique_ptr<kg::loader::RunnerClient> runner_;
};

TEST_F(PythonRunner, HonestKernelDispatchesNoComputeOperator) {
  if (const std::string why = kg::loader::kind_unavailable(Kind::Python); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(start("import numpy as np\nimport torch\n\ndef relu__default_kernel_impl(self):\n"
                  "    out = torch.empty_like(self)\n    np.maximum(self.numpy(), 0, out=out.numpy())\n    return out\n"),
            "");
  const at::Tensor x = at::randn({8, 16}).t();
  const auto out = runner_->call({x}, 1, 30);
  ASSERT_EQ(out.kind, kg::loader::CallOutcome::Kind::Ok) << out.message;
  EXPECT_TRUE(out.returns[0].toTensor().equal(at::relu(x)));
  EXPECT_TRUE(compute_ops(out).empty()) << ::testing::PrintToString(out.dispatched);
  EXPECT_TRUE(out.observations.empty()) << "no evidence for an honest kernel";
}

TEST_F(PythonRunner, FallbackToTheOpIsObserved) {
  if (const std::string why = kg::loader::kind_unavailable(Kind::Python); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(start("import torch\n\ndef relu_kernel_impl(x):\n    return torch.relu(x)\n"), "");
  const auto out = runner_->call({at::randn({32})}, 1, 30);
  ASSERT_EQ(out.kind, kg::loader::CallOutcome::Kind::Ok) << out.message;
  EXPECT_EQ(compute_ops(out), std::vector<std::string>{"aten::relu"});
}

TEST_F(PythonRunner, ExceptionsCarryTheirTraceback) {
  if (const std::string why = kg::loader::kind_unavailable(Kind::Python); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(start("def relu__default_kernel_impl(x):\n    return helper(x)\n\ndef helper(x):\n    raise KeyError('nope')\n"), "");
  const auto out = runner_->call({at::randn({4})}, 1, 30);
  ASSERT_EQ(out.kind, kg::loader::CallOutcome::Kind::OpError);
  EXPECT_NE(out.message.find("relu__default_kernel_impl raised:"), std::string::npos) << out.message;
  EXPECT_NE(out.message.find("line 5, in helper"), std::string::npos) << out.message;
  EXPECT_NE(out.message.find("KeyError: 'nope'"), std::string::npos) << out.message;
  // The runner goes on serving calls.
  EXPECT_TRUE(runner_->alive());
}

TEST_F(PythonRunner, ImportErrorIsTheLoadError) {
  if (const std::string why = kg::loader::kind_unavailable(Kind::Python); !why.empty()) GTEST_SKIP() << why;
  const std::string err = start("import torch\nraise ImportError('no such thing')\n");
  EXPECT_NE(err.find("the python source raised while it was imported"), std::string::npos) << err;
  EXPECT_NE(err.find("relu__default_implementation.py\", line 2, in <module>"), std::string::npos) << err;
  EXPECT_NE(err.find("ImportError: no such thing"), std::string::npos) << err;
  EXPECT_EQ(err.find(dir_.string()), std::string::npos) << "no host path in the message: " << err;
}

// torch.utils.cpp_extension is the runner's own: load_inline refuses with the marker the supervisor
// turns into the op's error (kernelgate's limit), and no compiler is ever started in the run box.
TEST_F(PythonRunner, LoadInlineIsRefusedWithKernelgatesMarker) {
  if (const std::string why = kg::loader::kind_unavailable(Kind::Python); !why.empty()) GTEST_SKIP() << why;
  const std::string err = start(
      "from torch.utils.cpp_extension import load_inline\n"
      "ext = load_inline(name='r', cpp_sources='torch::Tensor r(torch::Tensor x) { return x; }', functions=['r'])\n"
      "def relu__default_kernel_impl(x):\n    return ext.r(x)\n");
  EXPECT_NE(err.find(kg::protocol::kCppExtensionRefused), std::string::npos) << err;
  EXPECT_NE(err.find("line 2, in <module>"), std::string::npos) << err;
}

// On a cpu runner `import triton` (or any triton submodule) is answered with kernelgate's marker
// and the reason, on a machine with Triton or without: Triton kernels are set up on cuda only
// (interpreter.cc, kTritonPrelude; the H200 runs them: tools/gpu-check --only triton).
TEST_F(PythonRunner, TritonImportIsRefusedWithKernelgatesMarker) {
  if (const std::string why = kg::loader::kind_unavailable(Kind::Python); !why.empty()) GTEST_SKIP() << why;
  for (const char* import : {"import triton\n", "import triton.language as tl\n", "from triton import jit\n"}) {
    const std::string err = start(std::string("import torch\n") + import + "def relu__default_kernel_impl(x):\n    return x\n");
    EXPECT_NE(err.find(kg::protocol::kTritonRefused), std::string::npos) << import << err;
    EXPECT_NE(err.find("Triton kernels run on cuda:0 only"), std::string::npos) << err;
    EXPECT_NE(err.find("line 2, in <module>"), std::string::npos) << err;
    runner_.reset();
  }
}

// A source loaded to list its load_inline calls (protocol::kLoadListExtensions) records them instead
// of refusing: the Extensions call returns one call, its name first among its fields; any other
// call of that op is an error, and a plain load of the same source still refuses (nothing staged).
TEST_F(PythonRunner, ListingExtensionsRecordsLoadInlineCallsInsteadOfRefusing) {
  if (const std::string why = kg::loader::kind_unavailable(Kind::Python); !why.empty()) GTEST_SKIP() << why;
  const std::string source =
      "from torch.utils.cpp_extension import load_inline\n"
      "ext = load_inline(name='relu_ext', cpp_sources='torch::Tensor r(torch::Tensor x) { return x; }', functions=['r'])\n"
      "def relu__default_kernel_impl(x):\n    return ext.r(x)\n";
  EXPECT_NE(start(source).find(kg::protocol::kCppExtensionRefused), std::string::npos);
  runner_.reset();
  EXPECT_EQ(start(source, /*list_extensions=*/true), "");
  const std::vector<c10::IValue> call = {c10::IValue(static_cast<int64_t>(kg::protocol::ModelAction::Extensions)),
                                         c10::IValue(static_cast<int64_t>(0)), c10::IValue(c10::List<at::Tensor>())};
  const auto out = runner_->call(call, 1, 30);
  ASSERT_EQ(out.kind, kg::loader::CallOutcome::Kind::Ok) << out.message;
  ASSERT_TRUE(out.returns.size() == 1 && out.returns[0].isTensorList());
  const std::vector<at::Tensor> fields = out.returns[0].toTensorVector();
  ASSERT_EQ(fields.size(), 1 + kg::protocol::kInlineExtensionFields);
  EXPECT_EQ(fields[0].item<int64_t>(), 1);
  const at::Tensor name = fields[1].contiguous();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(name.data_ptr<uint8_t>()), static_cast<size_t>(name.numel())), "relu_ext");
  const std::vector<c10::IValue> forward = {c10::IValue(static_cast<int64_t>(kg::protocol::ModelAction::Forward)),
                                            c10::IValue(static_cast<int64_t>(0)), c10::IValue(c10::List<at::Tensor>())};
  EXPECT_EQ(runner_->call(forward, 1, 30).kind, kg::loader::CallOutcome::Kind::OpError);
}

// A source that does not compile says so first: the supervisor reports it as compile_error.
TEST_F(PythonRunner, ASyntaxErrorIsSaidFirst) {
  if (const std::string why = kg::loader::kind_unavailable(Kind::Python); !why.empty()) GTEST_SKIP() << why;
  const std::string err = start("def relu__default_kernel_impl(x:\n    return x\n");
  EXPECT_EQ(err.rfind(kg::protocol::kPythonDoesNotCompile, 0), 0u) << err;
  EXPECT_NE(err.find("SyntaxError"), std::string::npos) << err;
}

TEST_F(PythonRunner, LongTracebacksAreCutToTheirEnd) {
  if (const std::string why = kg::loader::kind_unavailable(Kind::Python); !why.empty()) GTEST_SKIP() << why;
  const std::string err = start("raise ValueError('x' * 10000 + '\\x1bEND')\n");
  EXPECT_LE(err.size(), 3100u);
  EXPECT_NE(err.find("bytes cut]"), std::string::npos) << err.substr(0, 200);
  EXPECT_NE(err.find("x?END"), std::string::npos) << "the end is kept, its escape character replaced";
  EXPECT_EQ(err.find('\x1b'), std::string::npos) << "control characters are replaced";
}

}  // namespace

// KernelBenchE2E.*: `kernelgate eval --problem` through the real binary on pairs whose fault is
// the problem's or the solution's, and on the parameters both models start from.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kernelgate/remove_tree.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

// std::filesystem::remove_all's job: libtorch 2.x exports a broken copy of it (remove_tree.h).
void remove_tree(const fs::path& p) {
  std::error_code ec;
  kg::loader::remove_tree(p.string(), ec);
}

const char* kReluProblem = R"(# relu
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(8, 16)]
def get_init_inputs():
    return []
)";

const char* kReluSolution = R"(# relu in numpy
import numpy as np
import torch
import torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return torch.from_numpy(np.maximum(np.ascontiguousarray(x.detach().numpy()), np.float32(0)))
)";

struct EvalRun {
  int exit_code = -1;
  std::string log;
  nlohmann::json op;  // the one op of results.json
};

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class KernelBenchE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!KG_TEST_PYTHON_KIND) GTEST_SKIP() << "kernelgate was built without its python plugin";
    dir_ = fs::path(KG_TEST_OUT) / ("e2e-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    remove_tree(dir_);
    fs::create_directories(dir_);
  }
  EvalRun eval(const std::string& problem, const std::string& solution, const std::string& extra = "") {
    std::ofstream(dir_ / "problem.py") << problem;
    std::ofstream(dir_ / "solution.py") << solution;
    return eval_args("--problem '" + (dir_ / "problem.py").string() + "' '" + (dir_ / "solution.py").string() + "' " + extra);
  }
  EvalRun eval_args(const std::string& args) {
    const fs::path out = dir_ / "out";
    const std::string cmd =
        "'" KG_BINARY "' eval " + args + " --seed 3 --no-timing --out '" + out.string() + "' > '" + (dir_ / "log").string() + "' 2>&1";
    const int status = std::system(cmd.c_str());
    EvalRun r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.log = read(dir_ / "log");
    try {
      const auto results = nlohmann::json::parse(read(out / "results.json"));
      if (results["ops"].size() == 1) r.op = results["ops"][0];
    } catch (const std::exception&) {}
    return r;
  }
  fs::path dir_;
};

TEST_F(KernelBenchE2E, AnHonestPairPassesEveryFamily) {
  const EvalRun r = eval(kReluProblem, kReluSolution);
  EXPECT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.op.value("verdict", ""), "pass") << r.op.dump(1);
  EXPECT_EQ(r.op.value("suite", ""), "kernelbench");
  EXPECT_EQ(r.op["tests"].value("total", 0), 5) << "three draws, non-contiguous copies, special values";
  // Where the pair's time went: two runners started and ended, the problem's inputs drawn, the
  // solution judged; nothing was built.
  const nlohmann::json& phases = r.op["phase_seconds"];
  for (const char* measured : {"runner_start", "samples", "judging", "runner_end"})
    EXPECT_GT(phases.value(measured, 0.0), 0.0) << measured << ": " << phases.dump();
  EXPECT_EQ(phases.value("build", -1.0), 0.0) << phases.dump();
  // The op evaluation's judging and timing parts are not a pair's phases: neither is reported.
  EXPECT_FALSE(r.op.contains("judging_seconds")) << r.op.dump(1);
  EXPECT_FALSE(r.op.contains("timing_seconds")) << r.op.dump(1);
}

TEST_F(KernelBenchE2E, AProblemWithoutModelIsTheProblemsFault) {
  std::string problem = kReluProblem;
  problem.replace(problem.find("class Model"), 11, "class Modle");
  const EvalRun r = eval(problem, kReluSolution);
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_EQ(r.op.value("verdict", ""), "error") << r.op.dump(1);
  const std::string error = r.op.value("error", "");
  EXPECT_EQ(error.rfind("the problem's fault", 0), 0u) << error;
  EXPECT_NE(error.find("defines no Model"), std::string::npos) << error;
}

TEST_F(KernelBenchE2E, NonLiteralConstructorArgumentsAreTheProblemsFault) {
  std::string problem = kReluProblem;
  problem.replace(problem.find("return []"), 9, "return [object()]");
  const EvalRun r = eval(problem, kReluSolution);
  EXPECT_EQ(r.op.value("verdict", ""), "error") << r.op.dump(1);
  EXPECT_NE(r.op.value("error", "").find("get_init_inputs() returned something other than Python literals"), std::string::npos)
      << r.op.dump(1);
}

TEST_F(KernelBenchE2E, NonTensorInputsAreTheProblemsFault) {
  std::string problem = kReluProblem;
  problem.replace(problem.find("return [torch.randn(8, 16)]"), 27, "return [torch.randn(8, 16), 3]");
  const EvalRun r = eval(problem, kReluSolution);
  EXPECT_EQ(r.op.value("verdict", ""), "error") << r.op.dump(1);
  EXPECT_NE(r.op.value("error", "").find("kernelgate judges tensors only"), std::string::npos) << r.op.dump(1);
}

TEST_F(KernelBenchE2E, ASolutionWithoutModelNewFailsWithTheReason) {
  std::string solution = kReluSolution;
  solution.replace(solution.find("class ModelNew"), 14, "class ModelOld");
  const EvalRun r = eval(kReluProblem, solution);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.op.value("verdict", ""), "fail") << r.op.dump(1);
  ASSERT_FALSE(r.op["failures"].empty()) << r.op.dump(1);
  EXPECT_EQ(r.op["failures"][0].value("category", ""), "runtime_error");
  EXPECT_NE(r.op["failures"][0].dump().find("defines no ModelNew"), std::string::npos) << r.op.dump(1);
  EXPECT_TRUE(r.op["violations"].empty());
}

TEST_F(KernelBenchE2E, ASolutionThatDoesNotCompileIsACompileError) {
  const EvalRun r = eval(kReluProblem, std::string(kReluSolution) + "def broken(:\n");
  EXPECT_EQ(r.op.value("verdict", ""), "fail") << r.op.dump(1);
  ASSERT_FALSE(r.op["failures"].empty());
  EXPECT_EQ(r.op["failures"][0].value("category", ""), "compile_error") << r.op.dump(1);
  EXPECT_NE(r.op["failures"][0].dump().find("SyntaxError"), std::string::npos) << r.op.dump(1);
}

// load_inline's sources are built by kernelgate (its compile sandbox, the cpu kind here) and the
// solution is judged with them: an honest C++ ReLU passes, and the build is named in the notes.
TEST_F(KernelBenchE2E, LoadInlineSourcesAreBuiltAndTheSolutionJudgedWithThem) {
  const char* solution = R"(# relu through load_inline (cpp_sources only), as KernelBench's solutions are written
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
cpp = """
torch::Tensor relu(torch::Tensor x) {
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  const float* in = xc.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) o[i] = in[i] > 0.f ? in[i] : 0.f;
  return out;
}
"""
ext = load_inline(name="relu_ext", cpp_sources=cpp, functions=["relu"], extra_cflags=["-O3", "-fopenmp"])
class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
)";
  const EvalRun r = eval(kReluProblem, solution);
  EXPECT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.op.value("verdict", ""), "pass") << r.op.dump(1);
  EXPECT_TRUE(r.op["violations"].empty()) << r.op.dump(1);
  const std::string notes = r.op["build_notes"].dump();
  EXPECT_NE(notes.find("load_inline(relu_ext): load_inline flags not applied: -fopenmp"), std::string::npos) << notes;
  EXPECT_GT(r.op["phase_seconds"].value("build", 0.0), 0.0) << r.op["phase_seconds"].dump();  // the extension's build
}

// --device cuda where there is no GPU is the command's error (exit 2), never the problem's fault.
TEST_F(KernelBenchE2E, DeviceCudaWithoutAGpuIsAUsageErrorNotTheProblemsFault) {
  if (std::system("test -e /dev/nvidiactl") == 0) GTEST_SKIP() << "this machine has a GPU";
  const EvalRun r = eval(kReluProblem, kReluSolution, "--device cuda");
  EXPECT_EQ(r.exit_code, 2) << r.log;
  EXPECT_NE(r.log.find("--device cuda: the linked libtorch has no CUDA, or no GPU is visible"), std::string::npos) << r.log;
}

// What kernelgate does not build stays its own limit: the pair's error says so, and the solution
// never fails for it (an extension that brings its own PYBIND11_MODULE instead of functions=).
// functions=None: the source's own PYBIND11_MODULE names the functions. kernelgate registers the
// C++ functions it binds by name, under the bound Python names; a binding it cannot register (a
// lambda) is kernelgate's limit, never the solution's failure.
TEST_F(KernelBenchE2E, LoadInlineWithItsOwnBindingsIsBuiltUnderTheBoundNames) {
  const char* solution = R"(# relu through load_inline with its own bindings, under another Python name
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
cpp = """
torch::Tensor relu_impl(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  auto* in = xc.data_ptr<float>();
  auto* out = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;
  return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("relu", &relu_impl, "relu on float32");
}
"""
ext = load_inline(name="relu_ext_bound", cpp_sources=cpp)
class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
)";
  const EvalRun r = eval(kReluProblem, solution);
  EXPECT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.op.value("verdict", ""), "pass") << r.op.dump(1);
}

TEST_F(KernelBenchE2E, LoadInlineBindingALambdaIsKernelgatesLimitNotTheSolutionsFailure) {
  const char* solution = R"(# relu through load_inline bound by a lambda
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
cpp = """
torch::Tensor relu(torch::Tensor x) { return x; }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("relu", [](torch::Tensor x) { return relu(x); }); }
"""
ext = load_inline(name="relu_ext", cpp_sources=cpp)
class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
)";
  const EvalRun r = eval(kReluProblem, solution);
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_EQ(r.op.value("verdict", ""), "error") << r.op.dump(1);
  EXPECT_NE(r.op.value("error", "").find("kernelgate cannot judge this solution"), std::string::npos) << r.op.dump(1);
  EXPECT_NE(r.op.value("error", "").find("binds lambdas"), std::string::npos) << r.op.dump(1);
  EXPECT_TRUE(r.op["failures"].empty()) << r.op.dump(1);
}

// Triton's JIT needs subprocesses and cache writes the runner's box refuses: `import triton` is
// answered with kernelgate's marker on every machine, and a Triton solution or python-kind kernel
// is kernelgate's limit (verdict error, no failure), never the submission's failure.
const char* kTritonRelu = R"(# relu as a Triton kernel
import torch
import triton
import triton.language as tl

@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, tl.where(x < 0, 0.0, x), mask=offs < n)

def relu_kernel_impl(x):
    out = torch.empty_like(x)
    _relu[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out
)";

TEST_F(KernelBenchE2E, TritonSolutionIsKernelgatesLimitNotTheSolutionsFailure) {
  const std::string solution = std::string(kTritonRelu) + R"(
import torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return relu_kernel_impl(x)
)";
  const EvalRun r = eval(kReluProblem, solution);
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_EQ(r.op.value("verdict", ""), "error") << r.op.dump(1);
  EXPECT_NE(r.op.value("error", "").find("imports Triton"), std::string::npos) << r.op.dump(1);
  EXPECT_TRUE(r.op["failures"].empty()) << r.op.dump(1);
  EXPECT_TRUE(r.op["violations"].empty()) << r.op.dump(1);
}

TEST_F(KernelBenchE2E, TritonPythonKindKernelIsKernelgatesLimitToo) {
  fs::create_directories(dir_ / "sub" / "relu");
  std::ofstream(dir_ / "sub" / "relu" / "relu_implementation_v1.py") << kTritonRelu;
  const EvalRun r = eval_args("'" + (dir_ / "sub").string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_EQ(r.op.value("verdict", ""), "error") << r.op.dump(1);
  EXPECT_NE(r.op.value("error", "").find("imports Triton"), std::string::npos) << r.op.dump(1);
  EXPECT_NE(r.op.value("error", "").find("kernelgate: Triton kernels cannot run in the runner yet"), std::string::npos) << r.op.dump(1);
  EXPECT_TRUE(r.op["failures"].empty()) << r.op.dump(1);
}

// Sources that change between the run that asked for them and the run that uses them cannot be
// judged as what was built: the pair is an error naming why, never a pass.
TEST_F(KernelBenchE2E, LoadInlineSourcesThatChangeBetweenRunsAreAnError) {
  const char* solution = R"(# the extension's name differs in every process
import os
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
cpp = "torch::Tensor relu(torch::Tensor x) { return x; }"
ext = load_inline(name="relu_" + os.urandom(4).hex(), cpp_sources=cpp, functions=["relu"])
class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
)";
  const EvalRun r = eval(kReluProblem, solution);
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_EQ(r.op.value("verdict", ""), "error") << r.op.dump(1);
  EXPECT_NE(r.op.value("error", "").find("its sources change from one run to the next"), std::string::npos) << r.op.dump(1);
}

// ModelNew draws its parameters in another order (a throwaway randn first): under the same seed
// alone its weights would differ; the reference's state copied over them makes it pass.
TEST_F(KernelBenchE2E, BothModelsStartFromTheReferencesParameters) {
  const char* problem = R"(# linear
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self, n, m):
        super().__init__()
        self.fc = nn.Linear(n, m)
    def forward(self, x):
        return self.fc(x)
def get_inputs():
    return [torch.randn(4, 16)]
def get_init_inputs():
    return [16, 8]
)";
  const char* solution = R"(# linear in numpy, its parameters drawn after a throwaway draw
import numpy as np
import torch
import torch.nn as nn
class ModelNew(nn.Module):
    def __init__(self, n, m):
        super().__init__()
        torch.randn(100)
        self.fc = nn.Linear(n, m)
    def forward(self, x):
        w = self.fc.weight.detach().numpy().astype(np.float64)
        b = self.fc.bias.detach().numpy().astype(np.float64)
        y = np.ascontiguousarray(x.detach().numpy()).astype(np.float64) @ w.T + b
        return torch.from_numpy(y.astype(np.float32))
)";
  const EvalRun r = eval(problem, solution);
  EXPECT_EQ(r.op.value("verdict", ""), "pass") << r.op.dump(1) << r.log;
  EXPECT_NE(r.op.dump().find("set to Model's (2 tensors)"), std::string::npos) << r.op.dump(1);
}

// The folder form: a problems folder and a solutions folder, as KernelBench lays them out; an op
// per matched problem, the unmatched named in results.json's problems and on stderr.
TEST_F(KernelBenchE2E, FoldersAreJudgedPairByPair) {
  fs::create_directories(dir_ / "problems");
  fs::create_directories(dir_ / "solutions");
  std::ofstream(dir_ / "problems/19_ReLU.py") << kReluProblem;
  std::ofstream(dir_ / "problems/20_LeakyReLU.py") << kReluProblem;
  std::ofstream(dir_ / "problems/21_Sigmoid.py") << kReluProblem;
  std::ofstream(dir_ / "solutions/19_ReLU.py") << kReluSolution;
  std::ofstream(dir_ / "solutions/level_1_problem_20_sample_0_kernel.py") << kReluSolution;
  const EvalRun r = eval_args("--problem '" + (dir_ / "problems").string() + "' '" + (dir_ / "solutions").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.log;
  const auto results = nlohmann::json::parse(read(dir_ / "out/results.json"));
  ASSERT_EQ(results["ops"].size(), 2u) << results.dump(1);
  EXPECT_EQ(results["ops"][0].value("op", ""), "19_ReLU");
  EXPECT_EQ(results["ops"][1].value("op", ""), "20_LeakyReLU");
  for (const auto& op : results["ops"]) EXPECT_EQ(op.value("verdict", ""), "pass") << op.dump(1);
  EXPECT_NE(results["problems"].dump().find("21_Sigmoid.py"), std::string::npos) << results["problems"].dump();
  EXPECT_NE(r.log.find("left out 21_Sigmoid.py"), std::string::npos) << r.log;
}

TEST_F(KernelBenchE2E, ProblemNeedsTwoPathsAndNothingBeside) {
  std::ofstream(dir_ / "p.py") << kReluProblem;
  EvalRun r = eval_args("--problem '" + (dir_ / "p.py").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.log;
  EXPECT_NE(r.log.find("--problem needs two paths"), std::string::npos) << r.log;
  r = eval_args("some_dir --problem '" + (dir_ / "p.py").string() + "' '" + (dir_ / "p.py").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.log;
  EXPECT_NE(r.log.find("takes no submission directory"), std::string::npos) << r.log;
  r = eval_args("--problem '" + (dir_ / "p.py").string() + "' '" + (dir_ / "absent.py").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.log;
  EXPECT_NE(r.log.find("absent.py"), std::string::npos) << r.log;
}

}  // namespace

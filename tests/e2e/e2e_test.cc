// End-to-end: `kernelgate eval` on the bundled examples and on submissions written by the tests,
// checking exit codes, verdicts, categories and evidence in results.json.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "e2e_util.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kg::e2e;

namespace {

bool has_category(const json& op, const std::string& cat) {
  for (const auto& f : op["failures"])
    if (f["category"] == cat) return true;
  return false;
}

std::string source_of(const std::string& example, const std::string& folder) {
  std::ifstream f(fs::path(KG_SOURCE_DIR) / "examples" / example / folder / (folder + "_implementation.cpp"));
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Writes a one-op submission (`folder`/`folder`_implementation.cpp), evaluates it with `args`,
// expects exit status 1, and returns the result of `op` (null when absent).
json eval_rejected(const std::string& name, const std::string& folder, const std::string& op, const std::string& source,
                   const std::string& args) {
  fs::path sub = temp_dir(name);
  write(sub / folder / (folder + "_implementation.cpp"), source);
  fs::path out = temp_dir(name + "-out");
  CommandResult r = run("eval " + sub.string() + " " + args + " --no-timing --out " + out.string());
  EXPECT_EQ(r.status, 1) << r.output;
  json res = load_results(out);
  const json* found = find_op(res, op);
  return found ? *found : json();
}

}  // namespace

TEST(E2E, CorrectExamplePassesEveryOp) {
  fs::path out = temp_dir("correct");
  CommandResult r = run("eval " KG_SOURCE_DIR "/examples/correct --seed 7 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  json res = load_results(out);
  for (const char* key : {"kernelgate_version", "device", "suite", "policy", "summary", "ops"}) EXPECT_TRUE(res.contains(key)) << key;
  EXPECT_EQ(res["suite"], "auto");  // the default: each op on the smallest suite that has it
  EXPECT_EQ(res["policy"], "competition");
  ASSERT_GE(res["ops"].size(), 5u);
  for (const char* op : {"relu.default", "add.Tensor", "_softmax.default", "sum.dim_IntList", "mm.default"}) {
    const json* o = find_op(res, op);
    ASSERT_NE(o, nullptr) << op;
    EXPECT_EQ((*o)["verdict"], "pass") << o->dump(2);
    EXPECT_GT((*o)["tests"]["total"].get<int>(), 0);
    EXPECT_EQ((*o)["tests"]["passed"], (*o)["tests"]["total"]);
    EXPECT_TRUE((*o)["failures"].empty());
    EXPECT_TRUE((*o)["violations"].empty());
    EXPECT_TRUE((*o)["speedup"].is_number()) << "a passing op is timed";
    EXPECT_EQ((*o)["suite"], "smoke") << op << ": smoke has samples for it";
  }
  EXPECT_NE(r.output.find("relu.default"), std::string::npos) << "the table is printed";
}

// A newcomer's op that the smoke suite does not have is judged on the next suite that does (edge),
// and results.json says so; an explicit --suite is kept as it is.
TEST(E2E, DefaultSuiteJudgesAnOpSmokeLacksAndNamesTheSuite) {
  fs::path sub = temp_dir("default-suite-sub");
  write(sub / "neg__default" / "neg__default_implementation.cpp",
        "#include <ATen/ATen.h>\n#include <ATen/Dispatch.h>\n"
        "at::Tensor neg__default_kernel_impl(const at::Tensor& self) {\n"
        "  at::Tensor out = at::empty(self.sizes(), self.options());\n"
        "  const int64_t n = self.numel(), dims = self.dim();\n"
        "  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), \"neg\", [&] {\n"
        "    const scalar_t* in = self.data_ptr<scalar_t>();\n"
        "    scalar_t* o = out.data_ptr<scalar_t>();\n"
        "    for (int64_t i = 0; i < n; ++i) {\n"
        "      int64_t off = 0, rest = i;\n"
        "      for (int64_t d = dims - 1; d >= 0; --d) { off += (rest % self.size(d)) * self.stride(d); rest /= self.size(d); }\n"
        "      o[i] = -in[off];\n"
        "    }\n"
        "  });\n"
        "  return out;\n"
        "}\n");
  fs::path out = temp_dir("default-suite");
  CommandResult r = run("eval " + sub.string() + " --no-timing --seed 1 --out " + out.string(), 600);
  EXPECT_EQ(r.status, 0) << r.output;
  json res = load_results(out);
  EXPECT_EQ(res["suite"], "auto");
  const json* o = find_op(res, "neg.default");
  ASSERT_NE(o, nullptr) << res.dump(1);
  EXPECT_EQ((*o)["suite"], "edge");
  EXPECT_EQ((*o)["verdict"], "pass") << o->dump(1);
  EXPECT_GT((*o)["tests"]["total"].get<int>(), 0);

  CommandResult smoke = run("eval " + sub.string() + " --no-timing --seed 1 --suite smoke --out " + out.string(), 600);
  EXPECT_EQ(smoke.status, 1) << smoke.output;
  EXPECT_NE(smoke.output.find("suite 'smoke' has no samples for neg.default"), std::string::npos) << smoke.output;
  fs::remove_all(out);
  fs::remove_all(sub);
}

TEST(E2E, BuggyExampleFailsWithCategoryAndEvidence) {
  fs::path out = temp_dir("buggy");
  CommandResult r = run("eval " KG_SOURCE_DIR "/examples/buggy --seed 7 --out " + out.string());
  ASSERT_EQ(r.status, 1) << r.output;
  json res = load_results(out);

  const json* relu = find_op(res, "relu.default");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ((*relu)["verdict"], "fail");
  ASSERT_TRUE(has_category(*relu, "nan_mask")) << relu->dump(2);
  const json& ev = (*relu)["failures"][0]["evidence"];
  EXPECT_TRUE(ev.contains("sample"));
  EXPECT_TRUE(ev.contains("first_mismatch"));
  EXPECT_GT(ev["mismatches"].get<int>(), 0);
  EXPECT_EQ((*relu)["failure_traits"]["special_values"], 1);
  EXPECT_TRUE((*relu)["speedup"].is_null()) << "a wrong op never gets a speedup";

  const json* add = find_op(res, "add.Tensor");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ((*add)["verdict"], "fail");
  EXPECT_TRUE(has_category(*add, "shape_mismatch")) << add->dump(2);
  EXPECT_EQ((*add)["failure_traits"]["broadcasting"], 1);

  const json* sum = find_op(res, "sum.dim_IntList");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ((*sum)["verdict"], "fail");
  ASSERT_TRUE(has_category(*sum, "value_mismatch")) << sum->dump(2);
  EXPECT_EQ((*sum)["failure_traits"]["non_contiguous"], 1);
  EXPECT_GT((*sum)["failures"][0]["evidence"]["max_abs_err"].get<double>(), 1.0);
  EXPECT_EQ(res["summary"]["failed"], 3);
}

TEST(E2E, UsageAndConfigurationErrorsExit2) {
  EXPECT_EQ(run("eval").status, 2);
  EXPECT_EQ(run("eval /nonexistent-dir-kg").status, 2);
  EXPECT_EQ(run("eval " KG_SOURCE_DIR "/examples/correct --bogus").status, 2);
  CommandResult suite = run("eval " KG_SOURCE_DIR "/examples/correct --suite no-such-suite --out " + temp_dir("suite").string());
  EXPECT_EQ(suite.status, 2);
  EXPECT_NE(suite.output.find("no-such-suite"), std::string::npos) << suite.output;
  fs::path bad = temp_dir("policy") / "broken.toml";
  write(bad, "name = \"broken\"\n[tolerance.f32]\natol = \"tiny\"\n");
  CommandResult pol = run("eval " KG_SOURCE_DIR "/examples/correct --policy " + bad.string());
  EXPECT_EQ(pol.status, 2);
  EXPECT_NE(pol.output.find("broken.toml"), std::string::npos) << pol.output;
  EXPECT_EQ(run("frobnicate").status, 2);
}

TEST(E2E, BrokenKernelsDoNotLoseOtherResults) {
  fs::path sub = temp_dir("broken");
  write(sub / "relu__default" / "relu__default_implementation.cpp", source_of("correct", "relu__default"));
  // A syntax error on line 3.
  write(sub / "mul__Tensor" / "mul__Tensor_implementation.cpp",
        "#include <ATen/ATen.h>\nat::Tensor mul__Tensor_kernel_impl(const at::Tensor& a, const at::Tensor& b) {\n  return a @ b;\n}\n");
  // The wrong signature: mm takes two tensors.
  write(sub / "mm__default" / "mm__default_implementation.cpp",
        "#include <ATen/ATen.h>\nat::Tensor mm__default_kernel_impl(const at::Tensor& a) { return a; }\n");
  // A kernel that segfaults.
  write(sub / "add__Tensor" / "add__Tensor_implementation.cpp",
        "#include <ATen/ATen.h>\nat::Tensor add__Tensor_kernel_impl(const at::Tensor& a, const at::Tensor& b, const at::Scalar&) {\n"
        "  volatile float* p = nullptr; *p = 1.0f; return a;\n}\n");
  // A folder that is not an op folder.
  fs::create_directories(sub / "notes");
  fs::path out = temp_dir("broken-out");
  CommandResult r = run("eval " + sub.string() + " --seed 3 --no-timing --out " + out.string());
  ASSERT_EQ(r.status, 1) << r.output;
  json res = load_results(out);
  const json* relu = find_op(res, "relu.default");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ((*relu)["verdict"], "pass") << relu->dump(2);

  const json* mul = find_op(res, "mul.Tensor");
  ASSERT_NE(mul, nullptr);
  ASSERT_TRUE(has_category(*mul, "compile_error")) << mul->dump(2);
  std::string msg = (*mul)["failures"][0]["evidence"]["message"];
  EXPECT_NE(msg.find("mul__Tensor/mul__Tensor_implementation.cpp:3:"), std::string::npos) << msg;

  const json* mm = find_op(res, "mm.default");
  ASSERT_NE(mm, nullptr);
  ASSERT_TRUE(has_category(*mm, "compile_error")) << mm->dump(2);
  std::string mm_msg = (*mm)["failures"][0]["evidence"]["message"];
  EXPECT_NE(mm_msg.find("at::Tensor mm__default_kernel_impl(const at::Tensor& self, const at::Tensor& mat2)"), std::string::npos) << mm_msg;

  const json* add = find_op(res, "add.Tensor");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ((*add)["verdict"], "fail");
  EXPECT_TRUE(has_category(*add, "crash")) << add->dump(2);
  EXPECT_EQ((*add)["tests"]["passed"], 0);

  ASSERT_EQ(res["problems"].size(), 1u);
  EXPECT_EQ(res["problems"][0]["folder"], "notes");
}

TEST(E2E, KernelThatWritesItsInputIsCaught) {
  fs::path sub = temp_dir("mutate");
  write(sub / "relu__default" / "relu__default_implementation.cpp",
        "#include <ATen/ATen.h>\n"
        "// Computes relu in place in its input, then returns a copy: right values, mutated input.\n"
        "at::Tensor relu__default_kernel_impl(const at::Tensor& self) {\n"
        "  at::Tensor out = at::empty(self.sizes(), self.options());\n"
        "  if (self.scalar_type() != at::kFloat || !self.is_contiguous()) return self.clamp_min(0);\n"
        "  float* p = self.data_ptr<float>(); float* o = out.data_ptr<float>();\n"
        "  for (int64_t i = 0; i < self.numel(); ++i) { if (p[i] < 0) p[i] = 0; o[i] = p[i]; }\n"
        "  return out;\n}\n");
  fs::path out = temp_dir("mutate-out");
  CommandResult r = run("eval " + sub.string() + " --seed 5 --no-timing --out " + out.string());
  ASSERT_EQ(r.status, 1) << r.output;
  json res = load_results(out);
  const json* relu = find_op(res, "relu.default");
  ASSERT_NE(relu, nullptr);
  EXPECT_TRUE(has_category(*relu, "input_mutated")) << relu->dump(2);
}

namespace {

// `kernelgate eval` (seed 5, no timing) of a relu submission whose kernel is `kernel_source`,
// under competition with 2 s calls; the results, with the exit status checked to be 1.
json eval_hanging_relu(const std::string& name, const std::string& kernel_source) {
  fs::path sub = temp_dir(name);
  write(sub / "relu__default" / "relu__default_implementation.cpp", kernel_source);
  fs::path pol = sub.parent_path() / ("kg-e2e-" + name + "-policy-" + std::to_string(::getpid()) + ".toml");
  write(pol, "name = \"short-calls\"\nbase = \"competition\"\n[limits]\nrun_call_time_s = 2\n");
  fs::path out = temp_dir(name + "-out");
  CommandResult r = run("eval " + sub.string() + " --seed 5 --no-timing --policy " + pol.string() + " --out " + out.string());
  fs::remove(pol);
  EXPECT_EQ(r.status, 1) << r.output;
  return load_results(out);
}

}  // namespace

TEST(E2E, HangingKernelTimesOutAndTheNextSampleStillRuns) {
  json res = eval_hanging_relu("hang",
                               "#include <ATen/ATen.h>\n"
                               "// Hangs on 0-d input only; every other sample must still be judged.\n"
                               "at::Tensor relu__default_kernel_impl(const at::Tensor& self) {\n"
                               "  if (self.dim() == 0) { volatile int x = 0; while (true) x = x + 1; }\n"
                               "  return self.clamp_min(0);\n}\n");
  const json* relu = find_op(res, "relu.default");
  ASSERT_NE(relu, nullptr) << res.dump(2);
  EXPECT_TRUE(has_category(*relu, "timeout")) << relu->dump(2);
  EXPECT_EQ((*relu)["failures"].size(), 1u) << relu->dump(2);
  EXPECT_EQ((*relu)["tests"]["passed"].get<int>(), (*relu)["tests"]["total"].get<int>() - 1);
}

TEST(E2E, AKernelThatAlwaysHangsCostsTwoTimeLimitsNotOnePerSample) {
  json res = eval_hanging_relu("hang-always",
                               "#include <ATen/ATen.h>\n"
                               "at::Tensor relu__default_kernel_impl(const at::Tensor& self) {\n"
                               "  volatile int x = 0; while (true) x = x + 1;\n"
                               "  return self;\n}\n");
  const json* relu = find_op(res, "relu.default");
  ASSERT_NE(relu, nullptr) << res.dump(2);
  ASSERT_EQ((*relu)["failures"].size(), 2u) << relu->dump(2);
  for (const auto& f : (*relu)["failures"]) EXPECT_EQ(f["category"], "timeout") << relu->dump(2);
  EXPECT_EQ((*relu)["tests"]["total"].get<int>(), 2) << relu->dump(2);
  ASSERT_FALSE((*relu)["skipped"].empty()) << relu->dump(2);
  EXPECT_NE((*relu)["skipped"][0].dump().find("not run: two samples ran past the time limit"), std::string::npos) << relu->dump(2);
  EXPECT_EQ((*relu)["verdict"], "fail");
}

TEST(E2E, SelfCheckPassesTheSmokeSuite) {
  fs::path out = temp_dir("selfcheck");
  CommandResult r = run("eval --self-check --suite smoke --no-timing --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  json res = load_results(out);
  EXPECT_GE(res["ops"].size(), 5u);
}

// An in-place add_ that computes the right values in `self` but returns a fresh copy: values
// alone cannot tell; the schema's Tensor(a!) says the return is `self` itself.
TEST(E2E, ResultsSayHowEachOpWasBuilt) {
  // A source no earlier run built (a unique comment): the first eval compiles it, the second
  // takes the artifact from the build cache, and results.json says which.
  const std::string tag = "// e2e build " + std::to_string(::getpid()) + " " + std::to_string(std::random_device{}()) + "\n";
  fs::path sub = temp_dir("built");
  write(sub / "relu__default" / "relu__default_implementation.cpp", tag + source_of("correct", "relu__default"));
  for (int round = 0; round < 2; ++round) {
    fs::path out = temp_dir("built-out-" + std::to_string(round));
    CommandResult r = run("eval " + sub.string() + " --no-timing --out " + out.string());
    ASSERT_EQ(r.status, 0) << r.output;
    const json res = load_results(out);
    const json* relu = find_op(res, "relu.default");
    ASSERT_NE(relu, nullptr);
    EXPECT_EQ((*relu)["build_cache_hit"], round == 1) << relu->dump(2);
  }
  // The cuda kind says which way nvcc's steps ran (built here; launching it needs a GPU).
  fs::path cuda = temp_dir("built-cuda");
  std::ifstream example(fs::path(KG_SOURCE_DIR) / "examples/cuda/correct/relu__default/relu__default_implementation.cu");
  write(cuda / "relu__default" / "relu__default_implementation.cu", tag + std::string(std::istreambuf_iterator<char>(example), {}));
  fs::path out = temp_dir("built-cuda-out");
  run("eval " + cuda.string() + " --no-timing --out " + out.string());
  const json res = load_results(out);
  const json* relu = find_op(res, "relu.default");
  ASSERT_NE(relu, nullptr);
  if (const std::string missing = cuda_kind_missing(); !missing.empty()) {
    // Without the toolkit the op's result must say so, not fail some other way.
    bool said = false;
    for (const auto& f : relu->value("failures", json::array()))
      said |= f.value("category", "") == "compile_error" &&
              f.value("evidence", json::object()).value("message", "").find("needs nvcc") != std::string::npos;
    EXPECT_TRUE(said) << relu->dump(2);
    GTEST_SKIP() << "the cuda kind is unavailable (" << missing << "): built where the toolkit is";
  }
  EXPECT_EQ((*relu)["build_cache_hit"], false) << relu->dump(2);
  ASSERT_TRUE(relu->contains("build_notes")) << relu->dump(2);
  bool precompiled = false;
  for (const auto& n : (*relu)["build_notes"]) precompiled |= n.get<std::string>().rfind("host prefix precompiled", 0) == 0;
  EXPECT_TRUE(precompiled) << relu->dump(2);
}

TEST(E2E, InPlaceOpReturningAFreshTensorFailsAliasing) {
  const json add =
      eval_rejected("alias", "add___Tensor", "add_.Tensor",
                    "#include <ATen/ATen.h>\n"
                    "at::Tensor& add___Tensor_kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {\n"
                    "  TORCH_CHECK(self.scalar_type() == at::kFloat && other.scalar_type() == at::kFloat, \"float only\");\n"
                    "  at::Tensor b = other.expand(self.sizes()).contiguous();\n"
                    "  at::Tensor a = self.contiguous();\n"
                    "  const float k = alpha.to<float>();\n"
                    "  for (int64_t i = 0; i < a.numel(); ++i) a.data_ptr<float>()[i] += k * b.data_ptr<float>()[i];\n"
                    "  self.copy_(a);\n"
                    "  static at::Tensor fresh;\n"
                    "  fresh = a.clone();\n"
                    "  return fresh;\n}\n",
                    "--seed 5");
  ASSERT_FALSE(add.is_null());
  ASSERT_TRUE(has_category(add, "aliasing")) << add.dump(2);
  for (const auto& f : add["failures"]) {
    if (f["category"] == "aliasing") { EXPECT_NE(f.dump().find("argument 0 (self) itself"), std::string::npos) << f.dump(2); }
  }
}

// A bool output left partly unwritten holds the runner's poison bytes, which are not valid bools:
// the runner settles them to 1 and says so, so it is unwritten_output, not a protocol violation.
TEST(E2E, UnwrittenBoolOutputIsUnwrittenOutput) {
  const json gt =
      eval_rejected("bool", "gt__Scalar", "gt.Scalar",
                    "#include <ATen/ATen.h>\n"
                    "at::Tensor gt__Scalar_kernel_impl(const at::Tensor& self, const at::Scalar& other) {\n"
                    "  at::Tensor x = self.contiguous().to(at::kDouble);\n"
                    "  at::Tensor out = at::empty(self.sizes(), self.options().dtype(at::kBool));\n"
                    "  for (int64_t i = 0; i < x.numel(); ++i)\n"
                    "    if (x.data_ptr<double>()[i] > other.toDouble()) out.data_ptr<bool>()[i] = true;  // false never written\n"
                    "  return out;\n}\n",
                    "--suite edge --seed 1");
  ASSERT_FALSE(gt.is_null());
  std::set<std::string> rules;
  for (const auto& v : gt["violations"]) rules.insert(v["rule"].get<std::string>());
  EXPECT_EQ(rules, std::set<std::string>{"unwritten_output"}) << gt.dump(2);
  EXPECT_FALSE(has_category(gt, "crash")) << gt.dump(2);
}

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  EXPECT_TRUE(f.good()) << "no " << p;
  return std::string(std::istreambuf_iterator<char>(f), {});
}

const json* audit_rule(const json& audit, const std::string& rule) {
  for (const auto& r : audit["rules"])
    if (r["rule"] == rule) return &r;
  return nullptr;
}

}  // namespace

TEST(E2E, AuditNamesTheRuleWithItsEvidence) {
  fs::path out = temp_dir("audit-exploit");
  CommandResult r = run("audit " KG_SOURCE_DIR "/tests/exploits/fallback_at_relu --seed 3 --out " + out.string());
  ASSERT_EQ(r.status, 1) << r.output;
  json audit = json::parse(read_text(out / "audit.json"));
  EXPECT_EQ(audit["policy"], "audit");
  EXPECT_EQ(audit["seed"], 3);
  EXPECT_EQ(audit["clean"], false);
  for (const char* key : {"submission", "kernelgate_version", "torch_version", "date", "ops"}) EXPECT_TRUE(audit.contains(key)) << key;
  ASSERT_EQ(audit["rules"].size(), 16u) << "every rule of the catalogue";
  const json* fallback = audit_rule(audit, "fallback_to_torch");
  ASSERT_NE(fallback, nullptr);
  EXPECT_EQ((*fallback)["action"], "reject");
  EXPECT_FALSE((*fallback)["checked"].get<std::string>().empty());
  const json& found = (*fallback)["ops"][0];
  EXPECT_EQ(found["op"], "relu.default");
  EXPECT_EQ(found["status"], "found") << fallback->dump(2);
  ASSERT_FALSE(found["evidence"].empty());
  EXPECT_NE(found["evidence"][0].get<std::string>().find("relu"), std::string::npos) << found.dump(2);
  EXPECT_EQ((*audit_rule(audit, "timer_tampering"))["ops"][0]["status"], "nothing_found");

  const std::string md = read_text(out / "audit.md");
  EXPECT_NE(md.find("### fallback_to_torch"), std::string::npos) << md;
  EXPECT_NE(md.find("- relu.default: **found**\n  - evidence: " + found["evidence"][0].get<std::string>()), std::string::npos) << md;
  EXPECT_NE(md.find("nothing found"), std::string::npos) << md;
  EXPECT_EQ(load_results(out)["ops"][0]["verdict"], "rejected");
}

TEST(E2E, AuditOfAnHonestOpFindsNothing) {
  fs::path out = temp_dir("audit-correct");
  CommandResult r = run("audit " KG_SOURCE_DIR "/examples/correct --ops relu.default --seed 3 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  json audit = json::parse(read_text(out / "audit.json"));
  EXPECT_EQ(audit["clean"], true);
  for (const auto& rule : audit["rules"]) {
    ASSERT_EQ(rule["ops"].size(), 1u);
    const json& op = rule["ops"][0];
    if (rule["rule"] == "no_device_work") {
      // Watched only in the cuda kind's host code on a GPU: a check that did not apply must never read as clean.
      EXPECT_EQ(op["status"], "not_checked") << rule.dump(2);
      EXPECT_NE(op["note"].get<std::string>().find("only the cuda kind"), std::string::npos) << rule.dump(2);
    } else if (rule["rule"] == "async_escape" || rule["rule"] == "fallback_to_torch" || rule["rule"] == "stateful_output" ||
               rule["rule"] == "impossible_speed") {
      EXPECT_EQ(op["status"], "nothing_found") << rule.dump(2);
    }
    EXPECT_TRUE(op["evidence"].empty()) << rule.dump(2);
    EXPECT_EQ(rule["checked"].get<std::string>().find("no description"), std::string::npos) << rule["rule"] << " is missing from the table";
  }
  const std::string md = read_text(out / "audit.md");
  EXPECT_NE(md.find("- relu.default: nothing found\n"), std::string::npos) << md;
  EXPECT_EQ(run("audit " KG_SOURCE_DIR "/examples/correct --policy competition").status, 2) << "the audit profile is not negotiable";
}

// A content memo (docs/threats.md B7) that only pays off while timed: outputs cached by a key of
// the input's values (64 sampled words plus the sum of every word: it hits only on exact
// revisits, so no correctness trial sees a wrong answer; a key of the sampled words alone is
// replayed_output under the near-twin trial), a miss spins 20 ms, a hit reads the input once and copies
// the output (a few ms on a loaded 2-core machine). Under the default policy every warm-up and timed
// call gets values of its own, so no timed call hits; with the fresh values capped at 17 MiB the
// calls cycle through two sets and the memo takes the median down to a copy.
TEST(E2E, TimedCallsNeverRevisitValuesSoAContentMemoNeverHits) {
  fs::path sub = temp_dir("memo");
  write(sub / "relu__default" / "relu__default_implementation.cpp", R"(
#include <ATen/ATen.h>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>
at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  static std::map<std::vector<uint32_t>, at::Tensor> memo;
  at::Tensor x = self.contiguous();
  const float* p = x.data_ptr<float>();
  const int64_t n = x.numel();
  std::vector<uint32_t> key;
  const uint32_t* words = reinterpret_cast<const uint32_t*>(p);
  uint64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += words[i];
  key.push_back(static_cast<uint32_t>(sum));
  key.push_back(static_cast<uint32_t>(sum >> 32));
  for (int64_t i = 0; i < n; i += n / 64 + 1) {
    uint32_t bits;
    std::memcpy(&bits, p + i, 4);
    key.push_back(bits);
  }
  auto hit = memo.find(key);
  if (hit != memo.end()) return hit->second.clone();
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (std::chrono::steady_clock::now() < until) {
  }
  at::Tensor out = at::empty_like(x);
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) o[i] = (p[i] > 0.f || p[i] != p[i]) ? p[i] : 0.f;
  memo[key] = out.clone();
  return out;
}
)");
  const fs::path trace = sub / "relu-8mib.txt";
  write(trace, "Operator: aten.relu.default\ncnt: 1, ((T([2097152], f32),), {})\n");
  const fs::path cycling = sub / "cycling.toml";
  write(cycling, "base = \"competition\"\nname = \"cycling\"\n[timing]\nrotation_mib = 17\n");

  auto timing_of = [&](const std::string& label, const std::string& policy_args) {
    fs::path out = temp_dir("memo-out-" + label);
    CommandResult r = run("eval " + sub.string() + " --suite " + trace.string() + policy_args + " --out " + out.string());
    json res = load_results(out);
    const json* op = find_op(res, "relu.default");
    EXPECT_TRUE(op && !(*op)["timing"].empty()) << r.output;
    return op && !(*op)["timing"].empty() ? (*op)["timing"][0] : json();
  };

  json fresh = timing_of("fresh", "");
  ASSERT_FALSE(fresh.is_null());
  EXPECT_GE(fresh["value_sets"].get<int>(), fresh["reps"].get<int>() + 3) << fresh.dump();
  EXPECT_GE(fresh["candidate_median_s"].get<double>(), 18e-3) << "a timed call hit the memo: " << fresh.dump();

  json cycled = timing_of("cycled", " --policy " + cycling.string());
  ASSERT_FALSE(cycled.is_null());
  EXPECT_EQ(cycled["value_sets"].get<int>(), 2) << cycled.dump();
  EXPECT_LT(cycled["candidate_median_s"].get<double>(), 10e-3) << "the memo should win on revisited values: " << cycled.dump();
}

// A policy's stop on precision (timing.stop_rel_error): each side's timed calls end once their
// median is known to within the fraction asked, never before min_reps; without it every call the
// count asks for is timed.
TEST(E2E, TimedCallsStopOnPrecisionOnlyWhereThePolicyAsks) {
  const fs::path dir = temp_dir("stop-policy");
  // min_seconds = 1 asks for max_reps calls of a relu that takes microseconds.
  write(dir / "lax.toml",
        "base = \"competition\"\nname = \"lax\"\n[timing]\nmin_reps = 5\nmax_reps = 200\nmin_seconds = 1\nstop_rel_error = 0.5\n");
  write(dir / "every.toml", "base = \"competition\"\nname = \"every\"\n[timing]\nmin_reps = 40\nmax_reps = 40\n");
  auto timings = [&](const std::string& policy) {
    const fs::path out = temp_dir("stop-out-" + policy);
    CommandResult r = run("eval " KG_SOURCE_DIR "/examples/correct --ops relu.default --policy " + (dir / (policy + ".toml")).string() +
                          " --out " + out.string());
    EXPECT_EQ(r.status, 0) << r.output;
    json res = load_results(out);
    const json* op = find_op(res, "relu.default");
    EXPECT_TRUE(op && (*op)["verdict"] == "pass" && !(*op)["timing"].empty()) << r.output;
    return op ? (*op)["timing"] : json::array();
  };
  const json lax = timings("lax");
  ASSERT_FALSE(lax.empty());
  for (const json& t : lax) {
    EXPECT_GE(t["reps"].get<int>(), 5) << t.dump();
    EXPECT_LT(t["reps"].get<int>(), 200) << "a +-50% median needs far fewer than 200 calls: " << t.dump();
    EXPECT_GE(t["eager_reps"].get<int>(), 5) << t.dump();
    EXPECT_LT(t["eager_reps"].get<int>(), 200) << t.dump();
    EXPECT_GT(t["speedup"].get<double>(), 0) << t.dump();
  }
  const json every = timings("every");
  ASSERT_FALSE(every.empty());
  for (const json& t : every) {
    EXPECT_EQ(t["reps"], 40) << t.dump();
    EXPECT_EQ(t["eager_reps"], 40) << t.dump();
  }
}

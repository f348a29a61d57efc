// RulesStatic: each static rule with a positive and a negative case, on symbol lists (what the
// ELF reader returns) and on shared objects g++ builds here whose imports carry real libtorch
// mangled names (declared with asm labels, so no torch headers are needed to build them).
#include "rules_test_util.h"

namespace kg::policy::test {
namespace {

Policy competition() { return load("competition"); }

ArtifactInfo with_imports(std::vector<std::string> imports) {
  ArtifactInfo a;
  a.path = "t.so";
  a.imports = std::move(imports);
  a.needed = {"libtorch_cpu.so.1.13", "libc10.so.1.13", "libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libc.so.6"};
  return a;
}

bool fires(const std::vector<Finding>& f, const std::string& rule) {
  return std::any_of(f.begin(), f.end(), [&](const Finding& x) { return rule_id(x.rule) == rule; });
}

// What examples/correct's artifacts import (dumped with kg-artifact-dump): registration glue,
// allocation, data pointers, TORCH_CHECK, dtype conversion, iostreams. None may fire.
const std::vector<std::string> kHonest = {
    "_ZN2at4_ops19empty_memory_format4callEN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTypeEEENS6_INS2_6LayoutEEENS6_INS2_6DeviceEEENS6_IbEENS6_INS2_12MemoryFormatEEE",
    "_ZN2at4_ops8to_dtype4callERKNS_6TensorEN3c1010ScalarTypeEbbNS5_8optionalINS5_12MemoryFormatEEE",
    "_ZNK2at10TensorBase8data_ptrIfEEPT_v",
    "_ZN3c106detail14torchCheckFailEPKcS2_jS2_",
    "_ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_S2_",
    "_ZN3c106detail19maybe_wrap_dim_slowEllb",
    "_ZN2at10infer_sizeEN3c108ArrayRefIlEES2_",
    "_ZN5torch7Library4_defEON3c106eitherINS1_12OperatorNameENS1_14FunctionSchemaEEEONS_11CppFunctionE",
    "_ZN5torch3jit17parseSchemaOrNameERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
    "_ZN3c1019UndefinedTensorImpl10_singletonE",
    "_ZN6caffe28TypeMeta26error_unsupported_typemetaES0_",
    "_ZNK2at10TensorBase5fill_ERKN3c106ScalarE",
    "_ZN2at4_ops5zero_4callERNS_6TensorE",
    "_ZN2at4_ops10empty_like4callERKNS_6TensorEN3c108optionalINS5_10ScalarTypeEEENS6_INS5_6LayoutEEENS6_INS5_6DeviceEEENS6_IbEENS6_INS5_12MemoryFormatEEE",
    "_ZN2at4_ops13empty_strided4callEN3c108ArrayRefINS2_6SymIntEEES5_NS2_8optionalINS2_10ScalarTypeEEENS6_INS2_6LayoutEEENS6_INS2_6DeviceEEENS6_IbEE",
    "_ZNK2at10TensorBase21__dispatch_contiguousEN3c1012MemoryFormatE",
    "_ZN2at8internal15invoke_parallelElllRKSt8functionIFvllEE",
    "_ZN2at15get_num_threadsEv",
    "memcpy",
    "memset",
    "_Znwm",
    "_ZdlPvm",
    "__cxa_atexit",
    "_ZSt20__throw_length_errorPKc",
    "pthread_create",
    "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
    "expf",
    "exp",
};

TEST(RulesStatic, HonestImportsRaiseNothing) {
  for (const char* op : {"relu.default", "add.Tensor", "mm.default", "_softmax.default", "sum.dim_IntList", "add_.Tensor"}) {
    const auto f = inspect_artifact(with_imports(kHonest), competition(), op);
    EXPECT_TRUE(f.empty()) << op << ": " << (f.empty() ? "" : rule_id(f[0].rule) + std::string(": ") + f[0].evidence);
  }
}

TEST(RulesStatic, FallbackAtOpsCall) {
  auto imports = kHonest;
  imports.push_back("_ZN2at4_ops4relu4callERKNS_6TensorE");
  const std::string ev = rule_fallback_to_torch(with_imports(imports), "relu.default");
  EXPECT_NE(ev.find("at::_ops::relu::call(at::Tensor const&)"), std::string::npos) << ev;
  EXPECT_NE(ev.find("aten operator entry point"), std::string::npos) << ev;
  EXPECT_TRUE(fires(inspect_artifact(with_imports(imports), competition(), "relu.default"), "fallback_to_torch"));
}

TEST(RulesStatic, FallbackRedispatchNativeCpuAndMethods) {
  for (const char* sym :
       {"_ZN2at4_ops2mm10redispatchEN3c1014DispatchKeySetERKNS_6TensorES6_", "_ZN2at6native4reluERKNS_6TensorE",
        "_ZN2at3cpu3addERKNS_6TensorES3_RKN3c106ScalarE", "_ZN2at25compositeexplicitautograd5zerosEN3c108ArrayRefIlEENS1_13TensorOptionsE",
        "_ZNK2at6Tensor4neg_Ev", "_ZNK2at6Tensor5indexEN3c108ArrayRefINS_8indexing11TensorIndexEEE", "_ZN3c1010Dispatcher13realSingletonEv",
        "_ZNK3c1010Dispatcher17findSchemaOrThrowEPKcS2_", "_ZN5torch3jit18getAllOperatorsForEN3c106SymbolE", "dlsym", "dlvsym", "dlopen"}) {
    auto imports = kHonest;
    imports.push_back(sym);
    EXPECT_FALSE(rule_fallback_to_torch(with_imports(imports), "relu.default").empty()) << sym;
  }
}

TEST(RulesStatic, AllowedEntriesBecomeFallbackWhenTheyAreTheJudgedOp) {
  const std::vector<std::string> clone = {"_ZN2at4_ops5clone4callERKNS_6TensorEN3c108optionalINS5_12MemoryFormatEEE"};
  EXPECT_TRUE(rule_fallback_to_torch(with_imports(clone), "relu.default").empty());
  EXPECT_FALSE(rule_fallback_to_torch(with_imports(clone), "clone.default").empty());
  EXPECT_FALSE(rule_fallback_to_torch(with_imports(clone), "aten::clone").empty());
  const std::vector<std::string> to = {"_ZN2at4_ops8to_dtype4callERKNS_6TensorEN3c1010ScalarTypeEbbNS5_8optionalINS5_12MemoryFormatEEE"};
  EXPECT_TRUE(rule_fallback_to_torch(with_imports(to), "add.Tensor").empty());
  EXPECT_FALSE(rule_fallback_to_torch(with_imports(to), "_to_copy.default").empty());
  const std::vector<std::string> fill = {"_ZNK2at10TensorBase5fill_ERKN3c106ScalarE"};
  EXPECT_TRUE(rule_fallback_to_torch(with_imports(fill), "mm.default").empty());
  EXPECT_FALSE(rule_fallback_to_torch(with_imports(fill), "fill_.Scalar").empty());
}

// The dynamic half judges dispatched operator names with the same list.
TEST(RulesStatic, DispatchedOperatorsUseTheSameAllowedList) {
  using kg::policy::dispatched_operator_allowed;
  for (const char* ok : {"aten::empty",        "aten::empty_like", "aten::empty_strided", "aten::zeros",
                         "aten::zero_",        "aten::fill_",      "aten::copy_",         "aten::clone",
                         "aten::contiguous",   "aten::to",         "aten::_to_copy",      "aten::view",
                         "aten::as_strided",   "aten::t",          "aten::item",          "aten::_local_scalar_dense",
                         "aten::size",         "prim::Constant",   "aten::broadcast_to",  "aten::broadcast_tensors",
                         "aten::scalar_tensor"})
    EXPECT_TRUE(dispatched_operator_allowed(ok, "relu.default")) << ok;
  for (const char* bad : {"aten::relu", "aten::clamp_min", "aten::add", "aten::mm", "aten::sum", "aten::_softmax", "aten::addmm"})
    EXPECT_FALSE(dispatched_operator_allowed(bad, "relu.default")) << bad;
  EXPECT_FALSE(dispatched_operator_allowed("aten::clone", "clone.default"));
  EXPECT_FALSE(dispatched_operator_allowed("aten::fill_", "fill_.Scalar"));
  EXPECT_FALSE(dispatched_operator_allowed("aten::_to_copy", "_to_copy.default"));
  EXPECT_FALSE(dispatched_operator_allowed("aten::broadcast_to", "broadcast_to.default"));
  EXPECT_FALSE(dispatched_operator_allowed("aten::scalar_tensor", "scalar_tensor.default"));
}

// A build that did not link: the undefined symbols of a vendor API are the evidence; an honest
// kernel's own missing function is not.
TEST(RulesStatic, ForbiddenLibraryInALinkFailure) {
  using kg::policy::rule_forbidden_library_unlinked;
  const std::string ev = rule_forbidden_library_unlinked({"cublasCreate_v2", "cublasSgemm_v2", "my_helper(int)"}, competition());
  EXPECT_NE(ev.find("cublas called (the build's link failed on it): cublasCreate_v2"), std::string::npos) << ev;
  EXPECT_EQ(ev.find("my_helper"), std::string::npos) << ev;
  EXPECT_TRUE(rule_forbidden_library_unlinked({"relu__default_kernel_impl(at::Tensor const&)"}, competition()).empty());
  Policy p = competition();
  p.allowed_libraries.push_back("cublas");
  EXPECT_TRUE(rule_forbidden_library_unlinked({"cublasSgemm_v2"}, p).empty());
}

TEST(RulesStatic, ForbiddenLibraryByNeededSymbolAndString) {
  Policy p = competition();
  ArtifactInfo a = with_imports(kHonest);
  EXPECT_TRUE(rule_forbidden_library(a, p).empty());
  a.needed.push_back("libopenblas.so.0");
  std::string ev = rule_forbidden_library(a, p);
  EXPECT_NE(ev.find("openblas linked (DT_NEEDED): libopenblas.so.0"), std::string::npos) << ev;
  EXPECT_NE(ev.find("allowed by the policy: cub, cutlass, thrust"), std::string::npos) << ev;
  p.allowed_libraries.push_back("openblas");
  EXPECT_TRUE(rule_forbidden_library(a, p).empty());

  ArtifactInfo b = with_imports({"cblas_sgemm", "sgemm_", "cublasSgemm_v2", "cudnnConvolutionForward", "dnnl_sgemm"});
  ev = rule_forbidden_library(b, competition());
  for (const char* lib : {"blas imported", "cublas imported", "cudnn imported", "onednn imported"})
    EXPECT_NE(ev.find(lib), std::string::npos) << lib << " in " << ev;

  // A string naming a library counts only together with a run-time lookup.
  ArtifactInfo c = with_imports(kHonest);
  c.library_strings = {"libopenblas.so.0", "cblas_sgemm"};
  EXPECT_TRUE(rule_forbidden_library(c, competition()).empty());
  c.imports.push_back("dlopen");
  EXPECT_NE(rule_forbidden_library(c, competition()).find("named in a string"), std::string::npos);

  // Header-only libraries compiled in: allowed by competition, forbidden where not listed.
  ArtifactInfo d = with_imports(kHonest);
  d.exports = {"_ZN7cutlass6KernelINS_4gemm6kernel4GemmEEEvNT_6ParamsE"};
  EXPECT_TRUE(rule_forbidden_library(d, competition()).empty());
  Policy none = competition();
  none.allowed_libraries.clear();
  EXPECT_NE(rule_forbidden_library(d, none).find("cutlass compiled in"), std::string::npos) << rule_forbidden_library(d, none);
}

TEST(RulesStatic, TimerTampering) {
  ArtifactInfo a = with_imports(kHonest);
  a.exports = {"relu__default_kernel_impl_helper", "_Z25relu__default_kernel_implRKN2at6TensorE"};
  EXPECT_TRUE(rule_timer_tampering(a).empty());
  for (const char* def : {"clock_gettime", "cudaEventElapsedTime", "cudaEventRecord", "cuEventElapsedTime",
                          "_ZNSt6chrono3_V212steady_clock3nowEv", "gettimeofday", "__cudaLaunchKernel", "cudaLaunchKernel"}) {
    ArtifactInfo b = a;
    b.exports.push_back(def);
    EXPECT_NE(rule_timer_tampering(b).find("defines (interposes)"), std::string::npos) << def;
  }
  for (const char* imp :
       {"clock_gettime", "_ZNSt6chrono3_V212steady_clock3nowEv", "time", "mprotect", "pkey_mprotect", "dl_iterate_phdr"}) {
    ArtifactInfo b = a;
    b.imports.push_back(imp);
    EXPECT_FALSE(rule_timer_tampering(b).empty()) << imp;
  }
  // Importing CUDA events and synchronisation is how multi-stream kernels are written.
  ArtifactInfo c = a;
  c.imports.insert(c.imports.end(), {"cudaEventRecord", "cudaStreamWaitEvent", "cudaStreamSynchronize", "cudaFuncSetAttribute",
                                     "__cudaLaunchKernel", "__cudaPushCallConfiguration"});
  EXPECT_TRUE(rule_timer_tampering(c).empty()) << rule_timer_tampering(c);
  ArtifactInfo d = a;
  d.textrel = true;
  EXPECT_NE(rule_timer_tampering(d).find("DT_TEXTREL"), std::string::npos);
  ArtifactInfo e = a;
  e.wx_segment = true;
  EXPECT_NE(rule_timer_tampering(e).find("writable and executable"), std::string::npos);
}

TEST(RulesStatic, CacheTampering) {
  ArtifactInfo a = with_imports({"cudaFuncSetAttribute", "cudaFuncSetCacheConfig", "cudaLaunchKernel", "cudaLaunchKernelExC"});
  EXPECT_TRUE(rule_cache_tampering(a).empty());
  for (const char* imp : {"cudaStreamSetAttribute", "cudaDeviceSetLimit", "cudaCtxResetPersistingL2Cache", "cuCtxSetLimit",
                          "cudaGraphKernelNodeSetAttribute"}) {
    ArtifactInfo b = a;
    b.imports.push_back(imp);
    EXPECT_NE(rule_cache_tampering(b).find(imp), std::string::npos) << imp;
  }
}

TEST(RulesStatic, ShapeSpecialisationReadsOfTheMode) {
  EXPECT_TRUE(rule_shape_specialisation(with_imports(kHonest)).empty());
  for (const char* imp : {"getenv", "secure_getenv", "environ", "program_invocation_short_name", "__progname", "gethostname"}) {
    auto imports = kHonest;
    imports.push_back(imp);
    EXPECT_NE(rule_shape_specialisation(with_imports(imports)).find(imp), std::string::npos) << imp;
  }
}

TEST(RulesStatic, RulesTurnedOffAreSkippedAndEvidenceNamesTheFile) {
  ArtifactInfo a = with_imports({"_ZN2at4_ops4relu4callERKNS_6TensorE", "clock_gettime"});
  Policy p = competition();
  auto f = inspect_artifact(a, p, "relu.default");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].rule, Rule::FallbackToTorch);
  EXPECT_EQ(f[0].evidence.rfind("t.so: imports ", 0), 0u) << f[0].evidence;
  EXPECT_EQ(f[1].rule, Rule::TimerTampering);
  p.rules["fallback_to_torch"] = Action::Off;
  f = inspect_artifact(a, p, "relu.default");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, Rule::TimerTampering);
}

TEST(RulesStatic, DemangleAndNames) {
  EXPECT_EQ(demangle("_ZN2at4_ops4relu4callERKNS_6TensorE"), "at::_ops::relu::call(at::Tensor const&)");
  EXPECT_EQ(demangle("memcpy"), "memcpy");
  EXPECT_EQ(demangle("_Zgarbage"), "_Zgarbage");
}

// The same rules on real shared objects: imports made with asm labels resolve to libtorch's
// mangled names exactly as a submission's calls would.
TEST(RulesStatic, OnBuiltArtifacts) {
  Scratch s;
  const std::string cheat = s.shared_object("cheat", R"(
#include <dlfcn.h>
struct Tensor;
extern "C" void* kg_relu(const Tensor&) asm("_ZN2at4_ops4relu4callERKNS_6TensorE");
extern "C" void* kg_use(const Tensor& t) { return kg_relu(t); }
extern "C" void* kg_find() { return dlsym(RTLD_DEFAULT, "cblas_sgemm"); }
extern "C" int clock_gettime(int, void*) { return 0; }
)");
  const std::string honest = s.shared_object("honest", R"(
#include <vector>
#include <thread>
extern "C" float kg_sum(const float* x, long n) {
  std::vector<float> part(2, 0.f);
  std::thread t([&] { for (long i = 0; i < n / 2; ++i) part[0] += x[i]; });
  for (long i = n / 2; i < n; ++i) part[1] += x[i];
  t.join();
  return part[0] + part[1];
}
)",
                                             "-pthread");
  ASSERT_FALSE(cheat.empty());
  ASSERT_FALSE(honest.empty());
  const auto f = inspect_artifact(read_artifact(cheat), competition(), "relu.default");
  EXPECT_TRUE(fires(f, "fallback_to_torch"));
  EXPECT_TRUE(fires(f, "timer_tampering"));
  EXPECT_TRUE(fires(f, "forbidden_library"));  // "cblas_sgemm" looked up with dlsym
  const auto g = inspect_artifact(read_artifact(honest), competition(), "sum.dim_IntList");
  EXPECT_TRUE(g.empty()) << rule_id(g[0].rule) << ": " << g[0].evidence;
}

}  // namespace
}  // namespace kg::policy::test

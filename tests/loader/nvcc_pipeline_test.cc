// nvcc's dry run rearranged into host and device chains (loader/src/nvcc_pipeline.h).
#include "nvcc_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace kg::loader;

namespace {

// `nvcc -c kg_unit.cu -o kg_unit.o --dryrun --keep` as CUDA 13.0 prints it (paths shortened).
const char* kNvcc13 = R"(#$ _NVVM_BRANCH_=nvvm
#$ _SPACE_= 
#$ TOP=/cuda
#$ CICC_PATH=/cuda/nvvm/bin
#$ NVVMIR_LIBRARY_DIR=/cuda/nvvm/libdevice
#$ LD_LIBRARY_PATH=/cuda/lib:
#$ PATH=/cuda/nvvm/bin:/cuda/bin:/usr/local/bin:/usr/bin:/bin
#$ INCLUDES="-I/cuda/targets/x86_64-linux/include"  
#$ SYSTEM_INCLUDES="-isystem" "/cuda/targets/x86_64-linux/include/cccl"  
#$ LIBRARIES=  "-L/cuda/targets/x86_64-linux/lib/stubs" "-L/cuda/targets/x86_64-linux/lib"
#$ CUDAFE_FLAGS=
#$ "/usr/bin"/g++-12 -std=c++17 -D__CUDA_ARCH_LIST__=900 -E -x c++ -D__CUDACC__ -D__NVCC__ -fPIC -O3 -include "cuda_runtime.h" -m64 "kg_unit.cu" -o "kg_unit.cpp4.ii" 
#$ cudafe++ --c++17 --static-host-stub --orig_src_file_name "kg_unit.cu" --orig_src_path_name "$PWD/kg_unit.cu" --m64 --parse_templates --gen_c_file_name "kg_unit.cudafe1.cpp" --stub_file_name "kg_unit.cudafe1.stub.c" --gen_module_id_file --module_id_file_name "kg_unit.module_id" "kg_unit.cpp4.ii" 
#$ "/usr/bin"/g++-12 -std=c++17 -D__CUDA_ARCH__=900 -D__CUDA_ARCH_LIST__=900 -E -x c++  -DCUDA_DOUBLE_MATH_FUNCTIONS -D__CUDACC__ -D__NVCC__ -fPIC -O3 -include "cuda_runtime.h" -m64 "kg_unit.cu" -o "kg_unit.cpp1.ii" 
#$ "$CICC_PATH/cicc" --c++17 --static-host-stub --orig_src_file_name "kg_unit.cu" -arch compute_90 -m64 --include_file_name "kg_unit.fatbin.c" -tused --module_id_file_name "kg_unit.module_id" --gen_c_file_name "kg_unit.cudafe1.c" --stub_file_name "kg_unit.cudafe1.stub.c" --gen_device_file_name "kg_unit.cudafe1.gpu"  "kg_unit.cpp1.ii" -o "kg_unit.ptx"
#$ ptxas -w -arch=sm_90 -m64  "kg_unit.ptx"  -o "kg_unit.sm_90.cubin" 
#$ fatbinary --create="kg_unit.fatbin" -64 "--image3=kind=ptx,sm=90,file=kg_unit.ptx" "--image3=kind=elf,sm=90,file=kg_unit.sm_90.cubin" --embedded-fatbin="kg_unit.fatbin.c" 
#$ "/usr/bin"/g++-12 -std=c++17 -D__CUDA_ARCH__=900 -D__CUDA_ARCH_LIST__=900 -c -x c++  -DCUDA_DOUBLE_MATH_FUNCTIONS -fPIC -O3 -m64 "kg_unit.cudafe1.cpp" -o "kg_unit.o" 
)";

std::string without_line_containing(const std::string& text, const std::string& needle) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end - pos + 1);
    if (line.find(needle) == std::string::npos) out += line;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

std::string without_word_for_test(std::string cmd, const std::string& word) {
  size_t at = cmd.find(" " + word + " ");
  if (at != std::string::npos) cmd.erase(at, word.size() + 1);
  return cmd;
}

}  // namespace

TEST(NvccPipeline, SplitsNvcc13IntoHostAndDeviceChains) {
  std::string why;
  auto p = nvcc::parse_dryrun(kNvcc13, "$ATEN", &why);
  ASSERT_TRUE(p) << why;
  ASSERT_EQ(p->host.size(), 2u);
  EXPECT_NE(p->host[0].find("-E -x c++"), std::string::npos);
  EXPECT_EQ(p->host[0].find("__CUDA_ARCH__="), std::string::npos);
  EXPECT_EQ(p->host[1].rfind("cudafe++ ", 0), 0u);
  ASSERT_EQ(p->device.size(), 4u);
  EXPECT_NE(p->device[0].find("-D__CUDA_ARCH__=900"), std::string::npos);
  EXPECT_NE(p->device[1].find("cicc"), std::string::npos);
  EXPECT_EQ(p->device[2].rfind("ptxas ", 0), 0u);
  EXPECT_EQ(p->device[3].rfind("fatbinary ", 0), 0u);
  EXPECT_NE(p->host_compile.find("\"kg_unit.cudafe1.cpp\" -o \"kg_unit.o\""), std::string::npos);
  EXPECT_EQ(p->module_id_file, "kg_unit.module_id");
  EXPECT_EQ(p->host_source, "kg_unit.cudafe1.cpp");
  EXPECT_EQ(p->stub_file, "kg_unit.cudafe1.stub.c");
  // cudafe++ reads the id written beforehand instead of writing one; cicc reads the same file.
  EXPECT_EQ(p->host[1].find("--gen_module_id_file"), std::string::npos);
  EXPECT_NE(p->host[1].find("--module_id_file_name \"kg_unit.module_id\""), std::string::npos);
  // The build script's defines reach both preprocessors, and nothing else.
  EXPECT_EQ(p->host[0].substr(p->host[0].size() - 6), " $ATEN");
  EXPECT_EQ(p->device[0].substr(p->device[0].size() - 6), " $ATEN");
  EXPECT_EQ(p->host[1].find("$ATEN"), std::string::npos);
  EXPECT_EQ(p->host_compile.find("$ATEN"), std::string::npos);
  // Settings the steps need are kept; nvcc's informational lists (several words) are not.
  auto has_env = [&](const std::string& prefix) {
    return std::any_of(p->env.begin(), p->env.end(), [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
  };
  EXPECT_TRUE(has_env("CICC_PATH=/cuda/nvvm/bin"));
  EXPECT_TRUE(has_env("NVVMIR_LIBRARY_DIR="));
  EXPECT_TRUE(has_env("PATH=/cuda/nvvm/bin:"));
  EXPECT_TRUE(has_env("INCLUDES=\"-I/cuda"));
  EXPECT_FALSE(has_env("SYSTEM_INCLUDES="));
  EXPECT_FALSE(has_env("LIBRARIES="));
}

TEST(NvccPipeline, RefusesOtherShapes) {
  std::string why;
  // Without --keep nvcc works in /tmp and removes its files: an extra step.
  std::string with_rm = std::string(kNvcc13) + "#$ rm /tmp/tmpxft_00000002_00000000-3_kg_unit.fatbin\n";
  EXPECT_FALSE(nvcc::parse_dryrun(with_rm, "", &why));
  EXPECT_NE(why.find("rm"), std::string::npos) << why;
  // No module id handed from cudafe++ to cicc: the chains could not be separated.
  std::string no_id = kNvcc13;
  no_id.replace(no_id.find("-tused --module_id_file_name \"kg_unit.module_id\""), 48, "-tused");
  EXPECT_FALSE(nvcc::parse_dryrun(no_id, "", &why));
  EXPECT_NE(why.find("module id"), std::string::npos) << why;
  // A step missing (no ptxas), or the host compile not last.
  EXPECT_FALSE(nvcc::parse_dryrun(without_line_containing(kNvcc13, "#$ ptxas"), "", &why));
  std::string text = kNvcc13;
  text += "#$ fatbinary --create=\"x.fatbin\"\n";
  EXPECT_FALSE(nvcc::parse_dryrun(text, "", &why));
  // A module id file that is not a plain name in the build folder.
  std::string odd = kNvcc13;
  for (size_t at; (at = odd.find("\"kg_unit.module_id\"")) != std::string::npos;) odd.replace(at, 19, "\"../x.module_id\"");
  EXPECT_FALSE(nvcc::parse_dryrun(odd, "", &why));
  // A path the shell would expand (a cache root with a $ or a backquote in it).
  std::string dollar = kNvcc13;
  dollar.replace(dollar.find("\"kg_unit.cu\" -o \"kg_unit.cpp4.ii\""), 12, "\"$HOME/x.cu\"");
  EXPECT_FALSE(nvcc::parse_dryrun(dollar, "", &why));
  EXPECT_NE(why.find("expand"), std::string::npos) << why;
  std::string tick = kNvcc13;
  tick.replace(tick.find("-O3"), 3, "-I`id`");
  EXPECT_FALSE(nvcc::parse_dryrun(tick, "", &why));
  // Nothing at all (nvcc failed).
  EXPECT_FALSE(nvcc::parse_dryrun("", "", &why));
  EXPECT_FALSE(why.empty());
}

TEST(NvccPipeline, PrecompileCommandIsTheHostCompileWithAHeader) {
  std::string why;
  auto p = nvcc::parse_dryrun(kNvcc13, "$ATEN", &why);
  ASSERT_TRUE(p) << why;
  const std::string cmd = nvcc::precompile_command(*p, "kg_host_prefix.h", "kg_host_prefix.h.gch");
  EXPECT_EQ(
      cmd,
      "\"/usr/bin\"/g++-12 -std=c++17 -D__CUDA_ARCH__=900 -D__CUDA_ARCH_LIST__=900 -x c++-header  -DCUDA_DOUBLE_MATH_FUNCTIONS -fPIC -O3 -m64 "
      "\"kg_host_prefix.h\" -o \"kg_host_prefix.h.gch\"");
  // Words it cannot find once each: no command (the build compiles the host part whole).
  nvcc::Pipeline no_x = *p;
  no_x.host_compile = without_word_for_test(no_x.host_compile, "-x c++");
  EXPECT_EQ(nvcc::precompile_command(no_x, "h", "h.gch"), "");
  nvcc::Pipeline twice = *p;
  twice.host_compile += " \"kg_unit.cudafe1.cpp\"";
  EXPECT_EQ(nvcc::precompile_command(twice, "h", "h.gch"), "");
  nvcc::Pipeline no_out = *p;
  no_out.host_compile = no_out.host_compile.substr(0, no_out.host_compile.find(" -o "));
  EXPECT_EQ(nvcc::precompile_command(no_out, "h", "h.gch"), "");
}

TEST(NvccPipeline, ModuleIdIsAnIdentifierPerSeed) {
  const std::string a = nvcc::module_id("seed a"), b = nvcc::module_id("seed b");
  EXPECT_EQ(a, nvcc::module_id("seed a"));
  EXPECT_NE(a, b);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a[0], '_');
  for (char c : a) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_') << a;
}

TEST(NvccPipeline, PreprocessVariantRewritesInputOutputAndTheForcedInclude) {
  std::string why;
  auto p = nvcc::parse_dryrun(kNvcc13, "$ATEN", &why);
  ASSERT_TRUE(p) << why;
  const std::string pp = p->host[0];
  EXPECT_EQ(nvcc::output_of(pp), "kg_unit.cpp4.ii");
  nvcc::PreprocessEdit e;
  e.input = "kg_unit_rest.cu";
  e.output = "rest.ii";
  e.front = "-I\"/cache/overlay\"";
  e.back = "-dM";
  e.include = "/cache/macros.h";
  EXPECT_EQ(
      nvcc::preprocess_variant(pp, e),
      "\"/usr/bin\"/g++-12 -I\"/cache/overlay\" -std=c++17 -D__CUDA_ARCH_LIST__=900 -E -x c++ -D__CUDACC__ -D__NVCC__ -fPIC -O3 -include "
      "\"/cache/macros.h\" -m64 \"kg_unit_rest.cu\" -o \"rest.ii\" $ATEN -dM");
  e.include = "";  // the forced include goes
  const std::string dropped = nvcc::preprocess_variant(pp, e);
  EXPECT_EQ(dropped.find("-include"), std::string::npos) << dropped;
  EXPECT_NE(dropped.find("\"kg_unit_rest.cu\" -o \"rest.ii\""), std::string::npos) << dropped;
  // Not a preprocess, or a word missing: no command.
  EXPECT_EQ(nvcc::preprocess_variant(p->host_compile, e), "");
  EXPECT_EQ(nvcc::preprocess_variant(without_word_for_test(pp, "\"kg_unit.cu\""), e), "");
  nvcc::PreprocessEdit keep;
  keep.input = "a.cu";
  keep.output = "a.ii";
  EXPECT_NE(nvcc::preprocess_variant(pp, keep).find("-include \"cuda_runtime.h\""), std::string::npos);
  std::string no_include = pp;
  no_include.erase(no_include.find("-include \"cuda_runtime.h\""), 25);
  EXPECT_EQ(nvcc::preprocess_variant(no_include, e), "");
}

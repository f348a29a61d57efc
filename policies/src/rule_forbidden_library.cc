// forbidden_library (docs/threats.md B2): the artifact links, imports from or names a precompiled
// vendor library the policy does not allow (policy.allowed_libraries, names from
// known_libraries()); or a build that did not link wanted that library's API (its link failure
// names the undefined symbols: kernelgate links no vendor library, so calling one directly ends
// there).
//
// Why: a GEMM from cuBLAS/MKL/OpenBLAS, a convolution from cuDNN/oneDNN, is the vendor's kernel,
// not the submission's; a competition that ranks kernels must not rank BLAS builds. The loader
// links only libtorch, libc10 (and cudart for cuda), so a vendor library arrives in one of
// three ways, each visible here:
//   1. DT_NEEDED (extra link flags, a linker script): the library's file name;
//   2. an undefined symbol of its API (a weak declaration resolves at run time against the copy
//      libtorch itself loaded, e.g. Debian's libblas.so.3 exports cblas_sgemm);
//   3. dlopen/dlsym by name: the import is fallback_to_torch's, and the name it looks up is a
//      string in the file ("libopenblas.so.0", "cblas_sgemm"), reported here as well.
// Header-only libraries (cub, cutlass, thrust) compile into the submission; their instantiations
// are recognised by namespace in the artifact's exported symbols.
#include "kernelgate/rules.h"
#include "rule_util.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>

namespace kg::policy {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The library a shared-object file name belongs to ("libcublasLt.so.12" -> "cublaslt"), or "".
std::string library_of_file(const std::string& file) {
  const std::string f = lower(file);
  const size_t slash = f.rfind('/');
  const std::string n = slash == std::string::npos ? f : f.substr(slash + 1);
  auto starts = [&](const char* p) { return n.rfind(p, 0) == 0; };
  if (starts("libcublaslt")) return "cublaslt";
  if (starts("libcublas")) return "cublas";
  if (starts("libcudnn")) return "cudnn";
  if (starts("libdnnl") || starts("libmkldnn")) return "onednn";
  if (starts("libmkl")) return "mkl";
  if (starts("libopenblas")) return "openblas";
  if (starts("libblas") || starts("libcblas") || starts("libatlas") || starts("libsatlas") || starts("libtatlas") || starts("libblis") ||
      starts("libf77blas") || starts("libgoto"))
    return "blas";
  if (starts("liblapack") || starts("libflame") || starts("libscalapack")) return "lapack";
  if (starts("libcufft")) return "cufft";
  if (starts("libcurand")) return "curand";
  if (starts("libcusolver")) return "cusolver";
  if (starts("libcusparse")) return "cusparse";
  if (starts("libcutensor")) return "cutensor";
  if (starts("libnccl")) return "nccl";
  return "";
}

// The library whose API a C symbol belongs to, or "".
std::string library_of_symbol(const std::string& raw) {
  auto starts = [&](const char* p) { return raw.rfind(p, 0) == 0; };
  if (starts("cublasLt")) return "cublaslt";
  if (starts("cublas")) return "cublas";
  if (starts("cudnn")) return "cudnn";
  if (starts("dnnl_") || starts("mkldnn_")) return "onednn";
  if (starts("mkl_") || starts("MKL_") || starts("vsl") || starts("vml")) return "mkl";
  if (starts("openblas_") || starts("goto_")) return "openblas";
  if (starts("cblas_")) return "blas";
  if (starts("LAPACKE_") || starts("lapack_")) return "lapack";
  if (starts("cufft")) return "cufft";
  if (starts("curand")) return "curand";
  if (starts("cusolver")) return "cusolver";
  if (starts("cusparse")) return "cusparse";
  if (starts("cutensor")) return "cutensor";
  if (starts("nccl")) return "nccl";
  // Fortran BLAS/LAPACK: lower-case s/d/c/z routine names with a trailing underscore.
  static const std::regex blas(
      R"(^[sdcz](gemm|gemv|gemm3m|symm|hemm|syrk|herk|syr2k|her2k|trmm|trsm|axpy|dot|dotu|dotc|scal|copy|swap|nrm2|asum|rot|rotg|ger|geru|gerc|symv|hemv|trmv|trsv|sbmv|spmv|gbmv|tbmv)_$|^i[sdcz]amax_$|^sdsdot_$|^dsdot_$)");
  static const std::regex lapack(
      R"(^[sdcz](getrf|getrs|getri|gesv|gesvd|gesdd|geqrf|gelqf|orgqr|ungqr|ormqr|potrf|potrs|potri|posv|syev|syevd|heev|heevd|geev|gels|gelsd|trtrs|trtri|sytrf|hetrf|laswp|lacpy|lange)_$)");
  if (std::regex_match(raw, blas)) return "blas";
  if (std::regex_match(raw, lapack)) return "lapack";
  return "";
}

// A header-only library's namespace in a demangled exported name.
std::string library_of_export(const std::string& raw) {
  const std::string q = rules::qualified_name(demangle(raw));
  for (const char* ns : {"cutlass", "cub", "thrust"}) {
    const std::string p = std::string(ns) + "::";
    if (q.rfind(p, 0) == 0 || q.find(" " + p) != std::string::npos || q.find("<" + p) != std::string::npos) return ns;
  }
  return "";
}

// BLAS routines are offered by several providers: allowing any of them allows the API.
bool allowed(const Policy& policy, const std::string& lib) {
  auto has = [&](const std::string& n) {
    return std::find(policy.allowed_libraries.begin(), policy.allowed_libraries.end(), n) != policy.allowed_libraries.end();
  };
  if (has(lib)) return true;
  if (lib == "blas") return has("openblas") || has("mkl");
  if (lib == "lapack") return has("mkl") || has("openblas");
  if (lib == "cublaslt") return false;  // cuBLASLt is its own grant: cublas does not imply it
  return false;
}

std::string allowed_list(const Policy& policy) {
  std::string o = " (allowed by the policy: ";
  for (size_t i = 0; i < policy.allowed_libraries.size(); ++i) o += (i ? ", " : "") + policy.allowed_libraries[i];
  if (policy.allowed_libraries.empty()) o += "none";
  return o + ")";
}

}  // namespace

std::string rule_forbidden_library_unlinked(const std::vector<std::string>& unresolved, const Policy& policy) {
  std::map<std::string, std::vector<std::string>> hits;  // library -> symbols
  for (const auto& s : unresolved) {
    const std::string lib = library_of_symbol(s);
    if (!lib.empty() && !allowed(policy, lib)) hits[lib].push_back(s);
  }
  if (hits.empty()) return "";
  std::string o;
  for (const auto& [lib, items] : hits)
    o += (o.empty() ? "" : "; ") + lib + " called (the build's link failed on it): " + rules::list_symbols(items, 4);
  return o + allowed_list(policy);
}

std::string rule_forbidden_library(const ArtifactInfo& info, const Policy& policy) {
  std::map<std::string, std::vector<std::string>> hits;  // "<lib>: <how>" -> items
  for (const auto& n : info.needed) {
    const std::string lib = library_of_file(n);
    if (!lib.empty() && !allowed(policy, lib)) hits[lib + " linked (DT_NEEDED)"].push_back(n);
  }
  for (const auto& s : info.imports) {
    const std::string lib = library_of_symbol(s);
    if (!lib.empty() && !allowed(policy, lib)) hits[lib + " imported"].push_back(s);
  }
  for (const auto& s : info.exports) {
    const std::string lib = library_of_export(s);
    if (!lib.empty() && !allowed(policy, lib)) hits[lib + " compiled in"].push_back(s);
  }
  // Names in the file's strings count only when the artifact can look names up at run time:
  // an honest kernel may well say "gemm" in an error message.
  const bool can_look_up = std::any_of(info.imports.begin(), info.imports.end(), [](const std::string& s) {
    return s == "dlopen" || s == "dlsym" || s == "dlvsym" || s == "dlmopen";
  });
  if (can_look_up)
    for (const auto& s : info.library_strings) {
      std::string lib = library_of_file(s);
      if (lib.empty()) lib = library_of_symbol(s);
      if (!lib.empty() && !allowed(policy, lib)) hits[lib + " named in a string (looked up with dlopen/dlsym)"].push_back(s);
    }
  if (hits.empty()) return "";
  std::string o;
  for (const auto& [how, items] : hits) { o += (o.empty() ? "" : "; ") + how + ": " + rules::list_symbols(items, 4); }
  return o + allowed_list(policy);
}

}  // namespace kg::policy

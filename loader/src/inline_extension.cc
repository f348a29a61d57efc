// load_inline's calls as the runner reports them: checked, keyed, and their flags sorted into
// applied and not (inline_extension.h). The build itself is build.cc's (build_inline_extension).
#include "kernelgate/inline_extension.h"

#include "build_plan.h"
#include "kernelgate/sha256.h"
#include "util.h"

#include <cctype>
#include <set>
#include <stdexcept>

namespace kg::loader {
namespace {

constexpr size_t kMaxFunctions = 256;
constexpr size_t kMaxFlags = 256;
constexpr size_t kMaxFlagBytes = 1024;

const char* const kFieldNames[kInlineExtensionFields] = {"name",      "cpp_sources",  "cuda_sources",      "with_cuda",
                                                         "functions", "extra_cflags", "extra_cuda_cflags", "extra_ldflags"};

[[noreturn]] void refuse(size_t field, const std::string& why) {
  throw std::runtime_error(std::string("load_inline's ") + kFieldNames[field] + ": " + why);
}

bool is_identifier(const std::string& s) {
  if (s.empty() || s.size() > 200 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::vector<std::string> lines_of(const std::string& text) { return text.empty() ? std::vector<std::string>{} : split(text, '\n'); }

std::vector<std::string> flags_of(const std::string& text, size_t field) {
  std::vector<std::string> out;
  for (const std::string& f : lines_of(text)) {
    if (f.size() > kMaxFlagBytes) refuse(field, "a flag of " + std::to_string(f.size()) + " bytes");
    for (char c : f)
      if (c < 32 || c > 126) refuse(field, "a flag with a byte outside printable ASCII");
    if (!f.empty()) out.push_back(f);
  }
  if (out.size() > kMaxFlags) refuse(field, std::to_string(out.size()) + " flags, over " + std::to_string(kMaxFlags));
  return out;
}

bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool is_define(const std::string& f) {
  if (!starts(f, "-D") || f.size() < 3) return false;
  const std::string name = f.substr(2, f.find('=') == std::string::npos ? std::string::npos : f.find('=') - 2);
  return is_identifier(name);
}

}  // namespace

InlineExtension parse_inline_extension(const std::vector<std::string>& fields) {
  if (fields.size() != kInlineExtensionFields)
    throw std::runtime_error("load_inline's call was reported with " + std::to_string(fields.size()) + " fields, expected " +
                             std::to_string(kInlineExtensionFields));
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].find('\0') != std::string::npos) refuse(i, "holds a NUL byte");
    if (fields[i].size() > kMaxInlineSourceBytes)
      refuse(i, std::to_string(fields[i].size()) + " bytes, over the " + std::to_string(kMaxInlineSourceBytes >> 20) +
                    " MiB kernelgate builds");
  }
  InlineExtension e;
  e.name = fields[0];
  if (e.name.empty() || e.name.size() > 200) refuse(0, "empty or over 200 bytes");
  for (char c : e.name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      refuse(0, "\"" + e.name.substr(0, 80) + "\" is not a module name (letters, digits, '_', '-', '.')");
  e.cpp_sources = fields[1];
  e.cuda_sources = fields[2];
  if (fields[3] != "0" && fields[3] != "1") refuse(3, "neither \"0\" nor \"1\"");
  e.with_cuda = fields[3] == "1";
  std::set<std::string> seen;
  for (const std::string& f : lines_of(fields[4])) {
    if (!is_identifier(f)) refuse(4, "\"" + f.substr(0, 80) + "\" is not a C++ function name");
    if (!seen.insert(f).second) refuse(4, "\"" + f + "\" is named twice");
    e.functions.push_back(f);
  }
  if (e.functions.empty()) refuse(4, "no function to register");
  if (e.functions.size() > kMaxFunctions)
    refuse(4, std::to_string(e.functions.size()) + " functions, over " + std::to_string(kMaxFunctions));
  e.extra_cflags = flags_of(fields[5], 5);
  e.extra_cuda_cflags = flags_of(fields[6], 6);
  e.extra_ldflags = flags_of(fields[7], 7);
  return e;
}

std::vector<std::string> inline_extension_fields(const InlineExtension& e) {
  return {e.name,
          e.cpp_sources,
          e.cuda_sources,
          e.with_cuda ? "1" : "0",
          join(e.functions, "\n"),
          join(e.extra_cflags, "\n"),
          join(e.extra_cuda_cflags, "\n"),
          join(e.extra_ldflags, "\n")};
}

std::string inline_extension_key(const InlineExtension& ext) {
  std::string text = "kgext1\n";
  for (const std::string& f : inline_extension_fields(ext)) text += std::to_string(f.size()) + ":" + f;
  return digest::sha256_hex(text);
}

std::string inline_extension_namespace(const std::string& key) { return "kgext_" + key.substr(0, 16); }

std::string inline_extension_file(const std::string& key) { return "kgext-" + key + ".so"; }

InlineFlags inline_flags(const InlineExtension& ext) {
  InlineFlags out;
  std::vector<std::string> not_applied;
  for (const std::string& f : ext.extra_cflags) {
    if (f == "-O0" || f == "-O1" || f == "-O2" || f == "-O3" || f == "-Os" || is_define(f) || f == "-ffast-math" || f == "-fno-fast-math" ||
        f == "-funroll-loops" || f == "-march=native" || f == "-mtune=native" || starts(f, "-mavx") || f == "-mfma" || f == "-mf16c")
      out.cxx.push_back(f);
    else not_applied.push_back(f);
  }
  // nvcc already builds with -O3 and --expt-relaxed-constexpr (toolchain::nvcc_flags); what
  // changes the device code's numbers or compiles at all is applied, nvcc then runs whole.
  for (const std::string& f : ext.extra_cuda_cflags) {
    if (f == "-O0" || f == "-O1" || f == "-O2" || f == "-O3" || f == "--expt-relaxed-constexpr" || f == "-expt-relaxed-constexpr") continue;
    if (f == "--use_fast_math" || f == "-use_fast_math" || starts(f, "--ftz=") || starts(f, "-ftz=") || starts(f, "--prec-div=") ||
        starts(f, "-prec-div=") || starts(f, "--prec-sqrt=") || starts(f, "-prec-sqrt=") || starts(f, "--fmad=") || starts(f, "-fmad=") ||
        is_define(f) || f == "--extended-lambda" || f == "--expt-extended-lambda" || f == "-expt-extended-lambda" ||
        starts(f, "-maxrregcount=") || starts(f, "--maxrregcount="))
      out.nvcc.push_back(f);
    else not_applied.push_back(f);
  }
  if (!not_applied.empty())
    out.notes.push_back("load_inline flags not applied: " + join(not_applied, " ") +
                        " (kernelgate builds C++17 for this device's architecture, without OpenMP, debugging or verbosity flags)");
  if (!ext.extra_ldflags.empty())
    out.notes.push_back("load_inline extra_ldflags not applied: " + join(ext.extra_ldflags, " ") +
                        " (an extension links libtorch and the CUDA runtime only)");
  if (!out.nvcc.empty()) out.notes.push_back("nvcc run whole for the extension's flags: " + join(out.nvcc, " "));
  return out;
}

}  // namespace kg::loader

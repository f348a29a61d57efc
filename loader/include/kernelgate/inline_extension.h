// torch.utils.cpp_extension.load_inline as kernelgate builds it (docs/kernelbench.md, "load_inline").
//
// A python source cannot build in its run box: the runner's own load_inline reports each call it
// could not satisfy (the eight fields below, as untrusted text), the supervisor builds each in the
// compile sandbox, the cpu kind's way for C++ sources and the cuda kind's for CUDA ones, into a
// library that registers every function the call names as a dispatcher op of the namespace
// inline_extension_namespace(key), and a second runner of the source finds the library staged
// beside it as inline_extension_file(key); its load_inline then returns those ops.
#pragma once

#include "kernelgate/loader.h"
#include "kernelgate/protocol.h"

#include <string>
#include <vector>

namespace kg::loader {

struct InlineExtension {
  std::string name;
  std::string cpp_sources;   // the list joined with '\n' (load_inline puts <torch/extension.h> first)
  std::string cuda_sources;  // "" for a C++-only extension
  bool with_cuda = false;
  std::vector<std::string> functions;  // C++ functions to register, by name
  std::vector<std::string> extra_cflags, extra_cuda_cflags, extra_ldflags;
};

// The fields in the order the runner reports them: protocol::kInlineExtensionFields. At most this
// many bytes in one field.
using protocol::kInlineExtensionFields;
inline constexpr size_t kMaxInlineSourceBytes = 4 << 20;

// From the runner's fields; throws std::runtime_error naming the field and the problem (a name
// that is not an identifier, a function that is not one, text that is not UTF-8 without NULs).
InlineExtension parse_inline_extension(const std::vector<std::string>& fields);
std::vector<std::string> inline_extension_fields(const InlineExtension& ext);

// SHA-256 (hex) over the fields, each as "<bytes>:<text>", after "kgext1\n": the runner's
// load_inline computes the same over the same fields.
std::string inline_extension_key(const InlineExtension& ext);
std::string inline_extension_namespace(const std::string& key);  // "kgext_" + 16 hex digits
std::string inline_extension_file(const std::string& key);       // "kgext-<key>.so"

// Builds the extension (the build cache, sandbox and diagnostics of build()); the artifact is named
// inline_extension_file(key). Flags kernelgate does not apply are named in the result's notes.
BuildResult build_inline_extension(const InlineExtension& ext, const BuildOptions& options);

}  // namespace kg::loader

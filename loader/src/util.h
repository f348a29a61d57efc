// Small string and file helpers private to the loader.
#pragma once

#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

namespace kg::loader {

std::vector<std::string> split(const std::string& s, char sep);
// The blank-separated words of `s`, empty ones left out (a configured list of flags).
std::vector<std::string> words(const std::string& s);
std::string join(const std::vector<std::string>& v, const std::string& sep);
std::string trim(const std::string& s);
std::string replace_all(std::string s, const std::string& from, const std::string& to);
// Single-quoted for a generated build script (kernelgate's own paths and flags).
std::string sh_quote(const std::string& s);
// `s` as a C++ string literal: quotes and backslashes escaped, any byte outside printable ASCII
// (and '?', so that no trigraph forms) as a three-digit octal escape. For generated source that
// embeds text: a schema with string defaults, an op's name.
std::string cpp_string_literal(const std::string& s);
void write_file(const std::string& path, const std::string& content);  // throws with the path
// The whole file into *out; false when it cannot be opened or read.
bool read_file(const std::string& path, std::string* out);
uint64_t fnv1a(const std::string& s);
std::string hex64(uint64_t v);
// $KERNELGATE_CACHE, else $XDG_CACHE_HOME/kernelgate, else ~/.cache/kernelgate, else
// /tmp/kernelgate-cache-<euid>; created 0700 and checked with ensure_private_dir().
std::string cache_root();
// Creates `path` (mode 0700) when missing, then insists that it is a real directory (not a
// symbolic link) owned by the running euid and writable by nobody else; throws naming the path,
// its owner and mode otherwise. What kernelgate loads and runs as root comes from these folders.
void ensure_private_dir(const std::string& path);
// Removes a file or a directory tree (like std::filesystem::remove_all, which must not be called:
// PyTorch 2.x wheels export a broken copy of it that can win symbol lookup). Never follows links.
void remove_tree(const std::string& path, std::error_code& ec);

}  // namespace kg::loader

// Name handling for the static rules: demangling and splitting qualified names.
#include "rule_util.h"

#include "kernelgate/rules.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace kg::policy {

std::string demangle(const std::string& mangled) {
  if (mangled.size() < 2 || mangled[0] != '_' || mangled[1] != 'Z') return mangled;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return mangled;
  return out.get();
}

namespace rules {

std::string qualified_name(const std::string& demangled) {
  std::string s = demangled;
  for (const char* prefix : {"vtable for ", "typeinfo for ", "typeinfo name for ", "VTT for ", "guard variable for ",
                             "construction vtable for ", "TLS init function for ", "TLS wrapper function for ", "non-virtual thunk to ",
                             "virtual thunk to ", "covariant return thunk to ", "reference temporary #0 for "})
    if (s.rfind(prefix, 0) == 0) return qualified_name(s.substr(std::string(prefix).size()));
  const std::string anon = "(anonymous namespace)";
  for (size_t at; (at = s.find(anon)) != std::string::npos;) s.replace(at, anon.size(), "{anonymous}");
  // The name ends at the first '(' outside template brackets (the parameter list); "operator()"
  // keeps its own parentheses.
  int depth = 0;
  size_t end = s.size();
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') depth++;
    else if (c == '>' && depth > 0) depth--;
    else if (c == '(' && depth == 0) {
      if (i >= 8 && s.compare(i - 8, 8, "operator") == 0 && i + 1 < s.size() && s[i + 1] == ')') {
        i++;
        continue;
      }
      end = i;
      break;
    }
  }
  s = s.substr(0, end);
  // A template function's demangling starts with its return type: the name is the last
  // space-separated token outside template brackets ("float* at::TensorBase::data_ptr<float>").
  depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') depth++;
    else if (c == '>' && depth > 0) depth--;
    else if (c == ' ' && depth == 0) {
      // "operator new", "operator delete[]", "operator<<": keep "operator" with what follows.
      if (i >= 8 && s.compare(i - 8, 8, "operator") == 0) continue;
      start = i + 1;
    }
  }
  return s.substr(start);
}

std::vector<std::string> components(const std::string& q) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (size_t i = 0; i < q.size(); ++i) {
    const char c = q[i];
    if (c == '<') depth++;
    if (c == '>' && depth > 0) depth--;
    if (depth == 0 && c == ':' && i + 1 < q.size() && q[i + 1] == ':') {
      out.push_back(cur);
      cur.clear();
      i++;
      continue;
    }
    cur += c;
  }
  out.push_back(cur);
  return out;
}

std::string bare(const std::string& component) {
  const size_t lt = component.find('<');
  // "operator<" and "operator<<" are names, not template arguments.
  if (lt == std::string::npos || component.rfind("operator", 0) == 0) return component;
  return component.substr(0, lt);
}

std::string list_symbols(const std::vector<std::string>& raw, size_t cap) {
  std::string o;
  for (size_t i = 0; i < raw.size() && i < cap; ++i) {
    const std::string d = demangle(raw[i]);
    o += (i ? "; " : "") + d;
    if (d != raw[i]) o += " [" + raw[i] + "]";
  }
  if (raw.size() > cap) o += "; and " + std::to_string(raw.size() - cap) + " more";
  return o;
}

}  // namespace rules
}  // namespace kg::policy

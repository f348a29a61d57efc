#include "nvcc_pipeline.h"

#include "kernelgate/sha256.h"

#include <algorithm>
#include <cctype>

namespace kg::loader::nvcc {
namespace {

enum class Step { HostPreprocess, Cudafe, DevicePreprocess, Cicc, Ptxas, Fatbinary, HostCompile };

bool is_env(const std::string& line) {
  size_t eq = line.find('=');
  if (eq == std::string::npos || eq == 0 || std::isdigit(static_cast<unsigned char>(line[0]))) return false;
  for (size_t i = 0; i < eq; ++i)
    if (!std::isalnum(static_cast<unsigned char>(line[i])) && line[i] != '_') return false;
  return true;
}

// Where a command's first word (its program) ends.
size_t program_end(const std::string& cmd) {
  bool quoted = false;
  for (size_t i = 0; i < cmd.size(); ++i) {
    if (cmd[i] == '"') quoted = !quoted;
    else if (!quoted && (cmd[i] == ' ' || cmd[i] == '\t')) return i;
  }
  return cmd.size();
}

// A command's program, quotes removed: "\"/usr/bin\"/g++-12 -E ..." -> "/usr/bin/g++-12".
std::string program(const std::string& cmd) {
  std::string p;
  for (char c : cmd.substr(0, program_end(cmd)))
    if (c != '"') p += c;
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Where `word` stands in `cmd` as a whole blank-separated word (npos when it does not).
size_t find_word(const std::string& cmd, const std::string& word) { return (" " + cmd + " ").find(" " + word + " "); }

bool has_word(const std::string& cmd, const std::string& word) { return find_word(cmd, word) != std::string::npos; }

// The argument after `flag`, quotes removed ("" when the flag is absent).
std::string value_after(const std::string& cmd, const std::string& flag) {
  size_t i = find_word(cmd, flag);
  if (i == std::string::npos) return "";
  i += flag.size();
  while (i < cmd.size() && cmd[i] == ' ') ++i;
  if (i < cmd.size() && cmd[i] == '"') {
    size_t end = cmd.find('"', i + 1);
    return end == std::string::npos ? "" : cmd.substr(i + 1, end - i - 1);
  }
  return cmd.substr(i, cmd.find(' ', i) - i);
}

std::string without_word(const std::string& cmd, const std::string& word) {
  std::string padded = " " + cmd + " ";
  size_t at;
  while ((at = padded.find(" " + word + " ")) != std::string::npos) padded.erase(at, word.size() + 1);
  return padded.substr(1, padded.size() - 2);
}

// One shell word: no blank outside double quotes (nvcc's informational lists, like
// SYSTEM_INCLUDES="-isystem" "dir", are not; no step reads them).
bool one_word(const std::string& value) {
  bool quoted = false;
  for (char c : value) {
    if (c == '"') quoted = !quoted;
    else if (!quoted && (c == ' ' || c == '\t')) return false;
  }
  return !quoted;
}

// The shell sees nvcc's lines as they are: only nvcc's own $CICC_PATH and the dry run's $PWD may
// expand (a path of the cache root with a $ or a backquote in it must not).
bool shell_safe(const std::string& line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '`' || line[i] == '\\') return false;
    if (line[i] == '$' && line.compare(i, 10, "$CICC_PATH") != 0 && line.compare(i, 4, "$PWD") != 0) return false;
  }
  return true;
}

bool plain_file_name(const std::string& s) {
  if (s.empty() || s.size() > 200) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') return false;
  return true;
}

}  // namespace

std::optional<Pipeline> parse_dryrun(const std::string& text, const std::string& preprocess_suffix, std::string* why) {
  auto refuse = [&](const std::string& reason) -> std::optional<Pipeline> {
    if (why) *why = reason;
    return std::nullopt;
  };
  Pipeline p;
  std::vector<std::pair<Step, std::string>> steps;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("#$ ", 0) != 0) continue;
    line = line.substr(3);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (line.empty()) continue;
    if (!shell_safe(line)) return refuse("a line the build script's shell would expand: " + line.substr(0, 80));
    if (is_env(line)) {
      if (!steps.empty()) return refuse("a setting after the first step: " + line);
      if (one_word(line.substr(line.find('=') + 1))) p.env.push_back(line);
      continue;
    }
    const std::string prog = program(line);
    Step s;
    if (prog == "cudafe++") s = Step::Cudafe;
    else if (prog == "cicc") s = Step::Cicc;
    else if (prog == "ptxas") s = Step::Ptxas;
    else if (prog == "fatbinary") s = Step::Fatbinary;
    else if (is_preprocess(line)) s = line.find("-D__CUDA_ARCH__=") != std::string::npos ? Step::DevicePreprocess : Step::HostPreprocess;
    else if (has_word(line, "-c")) s = Step::HostCompile;
    else return refuse("an unexpected step: " + prog);
    steps.push_back({s, line});
  }
  auto count = [&](Step s) { return std::count_if(steps.begin(), steps.end(), [&](const auto& x) { return x.first == s; }); };
  auto first = [&](Step s) {
    for (size_t i = 0; i < steps.size(); ++i)
      if (steps[i].first == s) return i;
    return steps.size();
  };
  auto last = [&](Step s) {
    size_t at = steps.size();
    for (size_t i = 0; i < steps.size(); ++i)
      if (steps[i].first == s) at = i;
    return at;
  };
  if (count(Step::HostPreprocess) != 1 || count(Step::Cudafe) != 1 || count(Step::DevicePreprocess) < 1 || count(Step::Cicc) < 1 ||
      count(Step::Ptxas) < 1 || count(Step::Fatbinary) != 1 || count(Step::HostCompile) != 1)
    return refuse("not the expected steps (one host preprocess and cudafe++, device preprocess, cicc, ptxas, fatbinary, one host compile)");
  if (first(Step::HostPreprocess) > first(Step::Cudafe) || first(Step::DevicePreprocess) > first(Step::Cicc) ||
      last(Step::Cicc) > first(Step::Fatbinary) || last(Step::Ptxas) > first(Step::Fatbinary) ||
      first(Step::HostCompile) != steps.size() - 1)
    return refuse("the steps are not in the expected order");

  for (auto& [step, cmd] : steps) {
    if (step == Step::Cudafe || step == Step::Cicc) {
      const std::string id_file = value_after(cmd, "--module_id_file_name");
      if (!plain_file_name(id_file)) return refuse(program(cmd) + " has no module id file, or not a plain one");
      if (p.module_id_file.empty()) p.module_id_file = id_file;
      if (id_file != p.module_id_file) return refuse("cudafe++ and cicc read different module id files");
      cmd = without_word(cmd, "--gen_module_id_file");
    }
    if (step == Step::Cudafe) {
      p.host_source = value_after(cmd, "--gen_c_file_name");
      p.stub_file = value_after(cmd, "--stub_file_name");
      if (!plain_file_name(p.host_source) || !plain_file_name(p.stub_file)) return refuse("cudafe++ writes no plain output or stub file");
    }
    if ((step == Step::HostPreprocess || step == Step::DevicePreprocess) && !preprocess_suffix.empty()) cmd += " " + preprocess_suffix;
    switch (step) {
      case Step::HostPreprocess:
      case Step::Cudafe: p.host.push_back(cmd); break;
      case Step::HostCompile: p.host_compile = cmd; break;
      default: p.device.push_back(cmd); break;
    }
  }
  return p;
}

std::string precompile_command(const Pipeline& p, const std::string& header, const std::string& pch) {
  std::string cmd = p.host_compile;
  const std::string quoted_source = "\"" + p.host_source + "\"";
  const std::string object = value_after(cmd, "-o");
  if (p.host_source.empty() || object.empty() || !has_word(cmd, "-c")) return "";
  for (const std::string& w : {quoted_source, p.host_source, std::string("-x c++")})
    if ((" " + cmd + " ").find(" " + w + " ") != (" " + cmd + " ").rfind(" " + w + " ")) return "";  // more than once
  auto replace = [&](const std::string& from, const std::string& to) {
    size_t at = find_word(cmd, from);
    if (at == std::string::npos) return false;
    cmd.replace(at, from.size(), to);
    return true;
  };
  if (!replace("-x c++", "-x c++-header")) return "";
  if (!replace(quoted_source, "\"" + header + "\"") && !replace(p.host_source, "\"" + header + "\"")) return "";
  if (!replace("-o \"" + object + "\"", "-o \"" + pch + "\"") && !replace("-o " + object, "-o \"" + pch + "\"")) return "";
  return without_word(cmd, "-c");
}

std::string preprocess_variant(const std::string& cmd, const PreprocessEdit& edit) {
  std::string out = " " + cmd + " ";
  auto replace_once = [&](const std::string& from, const std::string& to) {
    size_t at = out.find(" " + from + " ");
    if (at == std::string::npos || out.find(" " + from + " ", at + 1) != std::string::npos) return false;
    out.replace(at + 1, from.size(), to);
    return true;
  };
  if (!is_preprocess(cmd)) return "";
  const std::string output = value_after(cmd, "-o");
  if (output.empty() || !replace_once("-o \"" + output + "\"", "-o \"" + edit.output + "\"")) return "";
  if (!replace_once("\"kg_unit.cu\"", "\"" + edit.input + "\"")) return "";
  if (edit.include && !replace_once("-include \"cuda_runtime.h\"", edit.include->empty() ? "" : "-include \"" + *edit.include + "\""))
    return "";
  out = out.substr(1, out.size() - 2);
  if (!edit.front.empty()) out.insert(program_end(out), " " + edit.front);
  if (!edit.back.empty()) out += " " + edit.back;
  return out;
}

bool is_preprocess(const std::string& cmd) { return has_word(cmd, "-E"); }

std::string output_of(const std::string& cmd) { return value_after(cmd, "-o"); }

std::string module_id(const std::string& seed) { return "_" + digest::sha256_hex(seed).substr(0, 16) + "_10_kg_unit_cu"; }

}  // namespace kg::loader::nvcc

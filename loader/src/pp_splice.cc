#include "pp_splice.h"

#include "nvcc_pipeline.h"
#include "util.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace kg::loader::splice {
namespace {

// "#define NAME(x) body" -> "NAME"
std::string macro_name(const std::string& line) {
  const std::string head = "#define ";
  if (line.rfind(head, 0) != 0) return "";
  size_t end = head.size();
  while (end < line.size() && line[end] != ' ' && line[end] != '(') ++end;
  return line.substr(head.size(), end - head.size());
}

std::map<std::string, std::string> definitions(const std::string& dm) {
  std::map<std::string, std::string> out;
  std::istringstream in(dm);
  std::string line;
  while (std::getline(in, line)) {
    std::string name = macro_name(line);
    if (!name.empty()) out[name] = line;
  }
  return out;
}

// The test unit's part after the prefix: every kind of state the join must carry over.
const char* kSelfCheckBody =
    "// kernelgate: the preprocessed prefix's self-check\n"
    "#include <torch/extension.h>\n"
    "#include <cuda_runtime.h>\n"
    "#include <ATen/core/Tensor.h>\n"
    "#include <c10/util/Half.h>\n"
    "#include <cassert>\n"
    "#include <numeric>\n"
    "#include <vector>\n"
    "static const char* kg_where[] = {__BASE_FILE__, __FILE__};\n"
    "static const int kg_line = __LINE__, kg_level = __INCLUDE_LEVEL__;\n"
    "static const int kg_counter[] = {__COUNTER__, __COUNTER__};\n"
    "#ifdef TORCH_CHECK\n"
    "static void kg_check(const at::Tensor& t) { TORCH_CHECK(t.defined(), \"undefined\"); assert(kg_line > 0); }\n"
    "#endif\n";

}  // namespace

std::string macro_state(const std::string& after, const std::string& builtin, int counter, const std::string& base_file) {
  const auto before = definitions(builtin), now = definitions(after);
  std::ostringstream out;
  out << "// kernelgate: the macros at the end of the cuda unit's prefix (g++ -dM), less the compiler's own\n";
  for (const auto& [name, line] : before)
    if (!now.count(name)) out << "#undef " << name << "\n";
  for (const auto& [name, line] : now) {
    auto was = before.find(name);
    if (was != before.end() && was->second == line) continue;
    if (was != before.end()) out << "#undef " << name << "\n";
    out << line << "\n";
  }
  out << "#undef __BASE_FILE__\n#define __BASE_FILE__ \"" << base_file << "\"\n";
  for (int i = 0; i < counter; ++i) out << "#if __COUNTER__\n#endif\n";
  return out.str();
}

std::vector<std::string> entered_files(const std::string& text) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    // # 12 "path" 1 3 4
    if (line.size() < 4 || line[0] != '#' || line[1] != ' ' || !std::isdigit(static_cast<unsigned char>(line[2]))) continue;
    size_t q1 = line.find('"'), q2 = line.rfind('"');
    if (q1 == std::string::npos || q2 <= q1) continue;
    std::istringstream flags(line.substr(q2 + 1));
    int flag = 0;
    if (!(flags >> flag) || flag != 1) continue;
    std::string path = line.substr(q1 + 1, q2 - q1 - 1);
    if (!path.empty() && path[0] == '/' && seen.insert(path).second) out.push_back(path);
  }
  return out;
}

std::vector<std::string> search_dirs(const std::string& verbose) {
  std::vector<std::string> out;
  std::istringstream in(verbose);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("search starts here:") != std::string::npos) inside = true;
    else if (line.rfind("End of search list.", 0) == 0) break;
    else if (inside && line.size() > 1 && line[0] == ' ') {
      std::string dir = trim(line);
      const std::string framework = " (framework directory)";
      if (dir.size() > framework.size() && dir.compare(dir.size() - framework.size(), framework.size(), framework) == 0) continue;
      out.push_back(dir);
    }
  }
  return out;
}

bool has_pragma_once(const std::string& header_text) {
  std::istringstream in(header_text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string hash, pragma, once;
    words >> hash;
    if (hash == "#") words >> pragma;
    else if (hash.size() > 1 && hash[0] == '#') pragma = hash.substr(1);
    else continue;
    if (pragma == "pragma" && (words >> once) && once == "once") return true;
  }
  return false;
}

std::string tokens(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0 && line.size() > 2 && std::isdigit(static_cast<unsigned char>(line[2]))) continue;
    for (char c : line)
      if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  }
  return out;
}

std::string rest_unit(const std::string& unit, size_t prefix_lines, const std::string& unit_name) {
  size_t at = 0;
  for (size_t i = 0; i < prefix_lines; ++i) {
    at = unit.find('\n', at);
    if (at == std::string::npos) return "";
    ++at;
  }
  return "#line " + std::to_string(prefix_lines + 1) + " \"" + unit_name + "\"\n" + unit.substr(at);
}

std::string shell_function(size_t prefix_lines, const std::string& unit_name) {
  const std::string marker = "# " + std::to_string(prefix_lines + 1) + " \"" + unit_name + "\"";
  return "# kg_splice REST PREFIX ONCE OUT: the prefix's preprocessed output, then the rest's from its #line on; refused when\n"
         "# the rest entered one of the prefix's #pragma once headers again\n"
         "kg_splice() {\n"
         "  grep -qx '" +
         marker +
         "' \"$1\" || return 1\n"
         "  if sed -n 's/^# [0-9]* \"\\([^\"]*\\)\" 1.*$/\\1/p' \"$1\" | sort -u | xargs -r -d '\\n' realpath -m -- | grep -qxFf \"$3\"; then return 1; fi\n"
         "  { cat \"$2\" && sed -n '/^" +
         marker +
         "$/,$p' \"$1\"; } > \"$4\"\n"
         "}\n";
}

namespace {
Prefix files_in(const std::string& dir, const std::string& chain) {
  const fs::path d(dir);
  return {(d / ("kg_pp_" + chain + ".ii")).string(), (d / ("kg_macros_" + chain + ".h")).string(), (d / ("overlay-" + chain)).string(),
          (d / ("kg_once_" + chain + ".txt")).string()};
}
}  // namespace

std::optional<Prefix> find(const std::string& dir, const std::string& chain) {
  Prefix p = files_in(dir, chain);
  std::error_code ec;
  for (const auto& f : {p.text, p.macros, p.overlay, p.once})
    if (!fs::exists(f, ec)) return std::nullopt;
  return p;
}

std::string rest_command(const std::string& pp_command, const Prefix& prefix, const std::string& output) {
  nvcc::PreprocessEdit e;
  e.input = "kg_unit_rest.cu";
  e.output = output;
  e.front = "-I\"" + prefix.overlay + "\"";
  e.include = prefix.macros;
  return nvcc::preprocess_variant(pp_command, e);
}

namespace {

// One prepare() call's inputs.
struct Preparation {
  std::string chain, pp_command, env, prefix;
  fs::path dir;
  const RunScript& run;
  Prefix p;  // the files it leaves
};

std::string preprocess_to(const std::string& pp_command, const std::string& input, const std::string& output, const std::string& back,
                          bool drop_include) {
  nvcc::PreprocessEdit e;
  e.input = input;
  e.output = output;
  e.back = back;
  if (drop_include) e.include = "";
  return nvcc::preprocess_variant(pp_command, e);
}

// What preprocessing the prefix told.
struct PrefixState {
  std::string text;        // the prefix preprocessed
  std::string after_dm;    // the macros after it (-dM)
  std::string builtin_dm;  // the compiler's own macros (-dM of an empty unit)
  std::string verbose;     // -v: the include search path
  int counter = -1;        // how far the prefix took __COUNTER__
};

// Step 1: the prefix preprocessed; the macros after it and the compiler's own; the search path;
// how far the prefix took __COUNTER__. Returns why not, or "".
std::string preprocess_prefix(const Preparation& w, PrefixState* s) {
  const std::string& chain = w.chain;
  const std::string text_out = "kg_pp_" + chain + ".ii", after = chain + ".after", builtin = chain + ".builtin", search = chain + ".search",
                    probe = chain + ".probe";
  const std::vector<std::string> cmds = {preprocess_to(w.pp_command, "kg_unit.cu", text_out, "", false),
                                         preprocess_to(w.pp_command, "kg_unit.cu", after, "-dM", false),
                                         preprocess_to(w.pp_command, "kg_empty.cu", builtin, "-dM", true),
                                         preprocess_to(w.pp_command, "kg_empty.cu", "/dev/null", "-v", true),
                                         preprocess_to(w.pp_command, "kg_probe.cu", probe, "", false)};
  for (const auto& c : cmds)
    if (c.empty()) return "its preprocess command lacks a word to rewrite";
  try {
    write_file((w.dir / "kg_unit.cu").string(), w.prefix);
    write_file((w.dir / "kg_empty.cu").string(), "");
    write_file((w.dir / "kg_probe.cu").string(), w.prefix + "kg_counter_probe __COUNTER__\n");
  } catch (const std::exception& e) { return e.what(); }
  std::string err;
  if (!w.run("kg_splice_" + chain + ".sh",
             w.env + "ATEN=\"\"\n" + cmds[0] + "\n" + cmds[1] + "\n" + cmds[2] + "\n" + cmds[3] + " 2> " + search + "\n" + cmds[4] + "\n",
             &err))
    return "preprocessing the prefix failed: " + err;
  std::string probe_text;
  if (!read_file(w.p.text, &s->text) || !read_file((w.dir / after).string(), &s->after_dm) ||
      !read_file((w.dir / builtin).string(), &s->builtin_dm) || !read_file((w.dir / search).string(), &s->verbose) ||
      !read_file((w.dir / probe).string(), &probe_text))
    return "a preprocess output is missing";
  size_t at = probe_text.rfind("kg_counter_probe ");
  if (at != std::string::npos) s->counter = std::atoi(probe_text.c_str() + at + 17);
  if (s->counter < 0 || s->counter > 100000) return "no __COUNTER__ value after the prefix";
  return "";
}

// Empty stand-ins in `overlay` for a #pragma once header at `path`, under each name a search
// directory gives it (not for a name an earlier directory resolves to another file).
void add_stand_ins(const std::string& path, const std::vector<std::string>& dirs, const std::string& overlay) {
  std::error_code ec;
  for (size_t i = 0; i < dirs.size(); ++i) {
    if (path.rfind(dirs[i] + "/", 0) != 0) continue;
    const std::string rel = path.substr(dirs[i].size() + 1);
    bool shadowed = false;
    for (size_t j = 0; j < i && !shadowed; ++j) shadowed = fs::exists(fs::path(dirs[j]) / rel, ec);
    if (shadowed || rel.find("..") != std::string::npos) continue;
    fs::create_directories((fs::path(overlay) / rel).parent_path(), ec);
    write_file((fs::path(overlay) / rel).string(), "");
  }
}

// Step 2: the macros file; stand-ins and the canonical list for the #pragma once headers.
std::string write_prefix_files(const Prefix& p, const PrefixState& s) {
  const std::vector<std::string> dirs = search_dirs(s.verbose);
  if (dirs.empty()) return "no include search path in g++ -v";
  std::error_code ec;
  std::string once_list;
  try {
    write_file(p.macros, macro_state(s.after_dm, s.builtin_dm, s.counter, "kg_unit.cu"));
    fs::create_directories(p.overlay, ec);
    if (ec) return "cannot create " + p.overlay + ": " + ec.message();
    for (const auto& path : entered_files(s.text)) {
      std::string header;
      if (!read_file(path, &header)) return "cannot read " + path;
      if (!has_pragma_once(header)) continue;
      once_list += fs::weakly_canonical(path, ec).string() + "\n";
      add_stand_ins(path, dirs, p.overlay);
    }
    write_file(p.once, once_list);
  } catch (const std::exception& e) { return e.what(); }
  return "";
}

// Step 3: the self-check: a test unit preprocessed whole and joined must give the same tokens.
std::string self_check(const Preparation& w, size_t prefix_lines) {
  const std::string unit = w.prefix + kSelfCheckBody;
  try {
    write_file((w.dir / "kg_unit.cu").string(), unit);
    write_file((w.dir / "kg_unit_rest.cu").string(), rest_unit(unit, prefix_lines, "kg_unit.cu"));
  } catch (const std::exception& e) { return e.what(); }
  const std::string& chain = w.chain;
  const std::string whole = chain + ".check-whole", rest = chain + ".check-rest", joined = chain + ".check-joined";
  const std::string rest_cmd = rest_command(w.pp_command, w.p, rest);
  if (rest_cmd.empty()) return "its preprocess command lacks a word to rewrite";
  std::string err;
  if (!w.run("kg_splice_check_" + chain + ".sh",
             w.env + "ATEN=\"\"\n" + shell_function(prefix_lines, "kg_unit.cu") +
                 preprocess_to(w.pp_command, "kg_unit.cu", whole, "", false) + "\n" + rest_cmd + "\nkg_splice " + rest + " " +
                 sh_quote(w.p.text) + " " + sh_quote(w.p.once) + " " + joined + "\n",
             &err))
    return "the self-check did not join: " + err;
  std::string whole_text, joined_text;
  if (!read_file((w.dir / whole).string(), &whole_text) || !read_file((w.dir / joined).string(), &joined_text))
    return "a self-check output is missing";
  if (tokens(whole_text) != tokens(joined_text)) return "the self-check's joined tokens differ from its whole unit's";
  return "";
}

// The three steps' scratch files, removed once the prefix is prepared.
void remove_scratch(const fs::path& d, const std::string& chain) {
  std::error_code ec;
  for (const auto& f :
       {chain + ".after", chain + ".builtin", chain + ".search", chain + ".probe", chain + ".check-whole", chain + ".check-rest",
        chain + ".check-joined", std::string("kg_unit.cu"), std::string("kg_unit_rest.cu"), std::string("kg_empty.cu"),
        std::string("kg_probe.cu"), "kg_splice_" + chain + ".sh", "kg_splice_check_" + chain + ".sh"})
    remove_tree((d / f).string(), ec);
}

}  // namespace

std::optional<Prefix> prepare(const std::string& chain, const std::string& pp_command, const std::string& env, const std::string& prefix,
                              const std::string& dir, const RunScript& run, std::string* why) {
  const Preparation w{chain, pp_command, env, prefix, fs::path(dir), run, files_in(dir, chain)};
  const size_t prefix_lines = static_cast<size_t>(std::count(prefix.begin(), prefix.end(), '\n'));
  std::string reason;
  PrefixState state;
  if (prefix.empty() || prefix.back() != '\n') reason = "the prefix does not end with a newline";
  if (reason.empty()) reason = preprocess_prefix(w, &state);
  if (reason.empty()) reason = write_prefix_files(w.p, state);
  if (reason.empty()) reason = self_check(w, prefix_lines);
  if (!reason.empty()) {
    if (why) *why = reason;
    std::error_code ec;
    for (const auto& f : {w.p.text, w.p.macros, w.p.overlay, w.p.once}) remove_tree(f, ec);  // find() must not see a part
    return std::nullopt;
  }
  remove_scratch(w.dir, chain);
  return w.p;
}

}  // namespace kg::loader::splice

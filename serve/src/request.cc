// Request bodies: nesting, fields, paths and sizes checked before a task is accepted.
#include "request.h"

#include "kernelgate/sha256.h"
#include "kernelgate/names.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace kg::serve {
namespace {

bool path_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == '+';
}

// A relative path of up to 4 components of [A-Za-z0-9_.+-], none "." or "..", none hidden:
// nothing that climbs out of the submission folder, names a device or hides from a listing.
std::string path_problem(const std::string& path) {
  if (path.empty()) return "is empty";
  if (path.size() > 512) return "is longer than 512 characters";
  if (path.front() == '/') return "is absolute; paths are relative to the submission folder";
  size_t start = 0;
  int depth = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (part.empty()) return "has an empty component";
    if (part == "..") return "climbs out of the submission folder (\"..\")";
    if (part == ".") return "has a \".\" component";
    if (part.front() == '.') return "names a hidden file or folder (\"" + part + "\")";
    for (char c : part)
      if (!path_char(c)) return "has a character outside [A-Za-z0-9_.+-] in \"" + part + "\"";
    if (++depth > 4) return "is deeper than 4 folders";
    start = end + 1;
  }
  return "";
}

std::string where_field(const std::string& where, const std::string& field) { return where + field; }

std::string string_field(const json& body, const std::string& key, const std::string& where, size_t max_len = 128) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return "";
  if (!it->is_string()) throw RequestError(400, where_field(where, key), "must be a string");
  const std::string v = it->get<std::string>();
  if (v.size() > max_len) throw RequestError(400, where_field(where, key), "is longer than " + std::to_string(max_len) + " characters");
  return v;
}

bool valid_op(const std::string& op) {
  if (op.empty() || op.size() > 128) return false;
  for (char c : op)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) return false;
  return op.front() != '.' && op.back() != '.';
}

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

const std::vector<std::string> kKnownKeys = {"task_id", "files",  "source",   "op",      "kind",     "suite", "ops",
                                             "policy",  "timing", "priority", "problem", "solution", "name"};

}  // namespace

void check_nesting(const std::string& body, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : body) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > max_depth) throw RequestError(400, "body", "nests deeper than " + std::to_string(max_depth) + " levels");
    } else if (c == '}' || c == ']') --depth;
  }
}

json parse_body(const std::string& body, const RequestLimits& limits) {
  if (body.empty()) throw RequestError(400, "body", "is empty; expected a JSON object");
  check_nesting(body, limits.max_depth);
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) { throw RequestError(400, "body", std::string("is not valid JSON: ") + e.what()); }
  if (!j.is_object()) throw RequestError(400, "body", "must be a JSON object");
  return j;
}

bool valid_task_id(const std::string& id) {
  if (id.empty() || id.size() > 128 || id.front() == '.') return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

std::string new_task_id() {
  unsigned char bytes[16];
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open /dev/urandom for a task id");
  const ssize_t n = ::read(fd, bytes, sizeof bytes);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof bytes)) throw std::runtime_error("short read from /dev/urandom for a task id");
  std::string id;
  char hex[3];
  for (unsigned char b : bytes) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    id += hex;
  }
  return id;
}

// A KernelBench pair: `problem` and `solution` (the two files' text) and `name` (the problem's
// name, "problem" when absent), written as problem.py and solution.py.
void parse_kernelbench(const json& body, const RequestLimits& limits, const std::string& where, TaskRequest* t) {
  for (const char* key : {"problem", "solution"}) {
    if (!body.contains(key) || body[key].is_null())
      throw RequestError(400, where_field(where, key), "is missing: a KernelBench task gives problem and solution (each file's text)");
    if (!body[key].is_string()) throw RequestError(400, where_field(where, key), "must be the file's text (a string)");
    const std::string& text = body[key].get_ref<const std::string&>();
    if (text.size() > limits.max_file_bytes)
      throw RequestError(413, where_field(where, key),
                         "is " + std::to_string(text.size()) + " bytes; at most " + std::to_string(limits.max_file_bytes));
    if (text.find('\0') != std::string::npos) throw RequestError(400, where_field(where, key), "holds a NUL byte");
    t->files[std::string(key) + ".py"] = text;
  }
  for (const char* key : {"op", "kind", "ops", "suite"})
    if (body.contains(key)) throw RequestError(400, where_field(where, key), "does not go with problem and solution (a KernelBench pair)");
  t->kernelbench = string_field(body, "name", where, 64);
  if (t->kernelbench.empty()) t->kernelbench = "problem";
  if (!valid_name(t->kernelbench))
    throw RequestError(400, where_field(where, "name"), "must be a problem's name like \"19_ReLU\" (letters, digits, _ and -)");
}

TaskRequest parse_request(const json& body, const RequestLimits& limits, const std::string& where) {
  if (!body.is_object()) throw RequestError(400, where.empty() ? "body" : where.substr(0, where.size() - 1), "must be a JSON object");
  for (const auto& [key, value] : body.items())
    if (std::find(kKnownKeys.begin(), kKnownKeys.end(), key) == kKnownKeys.end())
      throw RequestError(400, where_field(where, key),
                         "is not a field of a task (known: task_id, files, source, op, kind, suite, ops, policy, timing, priority, "
                         "problem, solution, name)");
  TaskRequest t;
  t.task_id = string_field(body, "task_id", where);
  if (!t.task_id.empty() && !valid_task_id(t.task_id))
    throw RequestError(400, where_field(where, "task_id"), "must be 1 to 128 of [A-Za-z0-9._-], not starting with '.'");

  const bool has_files = body.contains("files") && !body["files"].is_null();
  const bool has_source = body.contains("source") && !body["source"].is_null();
  const bool has_problem = body.contains("problem") || body.contains("solution");
  if (has_problem) {
    if (has_files || has_source)
      throw RequestError(400, where + (has_files ? "files" : "source"), "give files, source or problem with solution, one of them");
    parse_kernelbench(body, limits, where, &t);
  } else if (has_files == has_source)
    throw RequestError(400, where + (has_files ? "source" : "files"),
                       has_files ? "give either files or source, not both" : "is missing: give files (path -> content) or source with op");
  if (has_files) {
    const json& files = body["files"];
    if (!files.is_object()) throw RequestError(400, where_field(where, "files"), "must be an object mapping paths to file contents");
    if (files.empty()) throw RequestError(400, where_field(where, "files"), "is empty");
    if (files.size() > limits.max_files)
      throw RequestError(413, where_field(where, "files"),
                         "holds " + std::to_string(files.size()) + " files; at most " + std::to_string(limits.max_files));
    for (const auto& [path, content] : files.items()) {
      const std::string field = where + "files[" + json(path).dump() + "]";
      if (std::string p = path_problem(path); !p.empty()) throw RequestError(400, field, "path " + p);
      if (!content.is_string()) throw RequestError(400, field, "must be the file's text (a string)");
      const std::string& text = content.get_ref<const std::string&>();
      if (text.size() > limits.max_file_bytes)
        throw RequestError(413, field, "is " + std::to_string(text.size()) + " bytes; at most " + std::to_string(limits.max_file_bytes));
      if (text.find('\0') != std::string::npos) throw RequestError(400, field, "holds a NUL byte: only text files are accepted");
      t.files[path] = text;
    }
    for (const char* key : {"op", "kind"})
      if (body.contains(key)) throw RequestError(400, where_field(where, key), "goes with source, not with files");
  } else if (has_source) {
    if (!body["source"].is_string()) throw RequestError(400, where_field(where, "source"), "must be the kernel's source text (a string)");
    const std::string source = body["source"].get<std::string>();
    if (source.size() > limits.max_file_bytes)
      throw RequestError(413, where_field(where, "source"),
                         "is " + std::to_string(source.size()) + " bytes; at most " + std::to_string(limits.max_file_bytes));
    if (source.find('\0') != std::string::npos) throw RequestError(400, where_field(where, "source"), "holds a NUL byte");
    const std::string op = string_field(body, "op", where);
    if (op.empty()) throw RequestError(400, where_field(where, "op"), "is missing: source needs the op it implements (\"relu.default\")");
    if (!valid_op(op)) throw RequestError(400, where_field(where, "op"), "\"" + op + "\" is not an op overload name like \"relu.default\"");
    std::string kind = string_field(body, "kind", where);
    if (kind.empty()) kind = "cpu";
    std::string ext;
    if (kind == "cpu") ext = ".cpp";
    else if (kind == "cuda") ext = ".cu";
    else if (kind == "nvrtc")
      throw RequestError(400, where_field(where, "kind"),
                         "nvrtc submissions need their manifest: send them as files (docs/submissions.md)");
    else throw RequestError(400, where_field(where, "kind"), "\"" + kind + "\" is not a kind of the source form (cpu, cuda)");
    const std::string folder = names::folder_spelling(op);
    t.files[folder + "/" + folder + "_implementation" + ext] = source;
    t.ops = {op};
  }

  if (!has_problem && body.contains("name")) throw RequestError(400, where_field(where, "name"), "goes with problem and solution");
  t.suite = string_field(body, "suite", where, 64);
  if (!t.suite.empty() && !valid_name(t.suite)) throw RequestError(400, where_field(where, "suite"), "must be a suite name like \"smoke\"");
  t.policy = string_field(body, "policy", where, 64);
  if (!t.policy.empty() && !valid_name(t.policy))
    throw RequestError(400, where_field(where, "policy"), "must be the name of a shipped policy profile (no paths)");
  if (body.contains("ops") && !body["ops"].is_null()) {
    if (has_source) throw RequestError(400, where_field(where, "ops"), "goes with files; source names its one op with op");
    const json& ops = body["ops"];
    if (!ops.is_array() || ops.size() > 256) throw RequestError(400, where_field(where, "ops"), "must be an array of at most 256 op names");
    for (size_t i = 0; i < ops.size(); ++i) {
      if (!ops[i].is_string() || !valid_op(ops[i].get<std::string>()))
        throw RequestError(400, where + "ops[" + std::to_string(i) + "]", "must be an op overload name like \"relu.default\"");
      t.ops.push_back(ops[i].get<std::string>());
    }
  }
  if (body.contains("timing") && !body["timing"].is_null()) {
    if (!body["timing"].is_boolean()) throw RequestError(400, where_field(where, "timing"), "must be true or false");
    t.timing = body["timing"].get<bool>();
  }
  if (body.contains("priority") && !body["priority"].is_null()) {
    if (!body["priority"].is_number_integer())
      throw RequestError(400, where_field(where, "priority"), "must be an integer from -100 to 100");
    const int64_t p = body["priority"].get<int64_t>();
    if (p < -100 || p > 100) throw RequestError(400, where_field(where, "priority"), "must be an integer from -100 to 100");
    t.priority = static_cast<int>(p);
  }
  json decided = {
      {"files", t.files}, {"suite", t.suite}, {"ops", t.ops}, {"policy", t.policy}, {"timing", t.timing ? json(*t.timing) : json()}};
  if (!t.kernelbench.empty()) decided["kernelbench"] = t.kernelbench;  // absent otherwise: earlier hashes stand
  t.content_hash = digest::sha256_hex(decided.dump());
  return t;
}

json TaskRequest::to_json() const {
  return {{"task_id", task_id},
          {"files", files},
          {"suite", suite},
          {"ops", ops},
          {"policy", policy},
          {"timing", timing ? json(*timing) : json()},
          {"priority", priority},
          {"content_hash", content_hash},
          {"kernelbench", kernelbench}};
}

TaskRequest TaskRequest::from_stored(const json& j) {
  TaskRequest t;
  t.task_id = j.at("task_id").get<std::string>();
  t.files = j.at("files").get<std::map<std::string, std::string>>();
  t.suite = j.value("suite", "");
  t.ops = j.value("ops", std::vector<std::string>{});
  t.policy = j.value("policy", "");
  if (j.contains("timing") && j["timing"].is_boolean()) t.timing = j["timing"].get<bool>();
  t.priority = j.value("priority", 0);
  t.content_hash = j.value("content_hash", "");
  t.kernelbench = j.value("kernelbench", "");
  return t;
}

}  // namespace kg::serve

// A submitted task as the service keeps it, and the checks a request body goes through before it
// is accepted (request.cc). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kg::serve {

using json = nlohmann::json;

// A request the service refuses: the HTTP status, the field at fault ("body", "files[\"a/b.cpp\"]")
// and what is wrong with it.
struct RequestError : std::runtime_error {
  RequestError(int status, std::string field, const std::string& message)
      : std::runtime_error(message), status(status), field(std::move(field)) {}
  int status;
  std::string field;
};

struct RequestLimits {
  size_t max_files = 64;
  size_t max_file_bytes = 1u << 20;
  int max_depth = 32;  // JSON nesting
};

// What the client asked for. `content_hash` covers everything that decides the result (files,
// suite, ops, policy, timing; not the priority), so a repeated task id can be told apart.
struct TaskRequest {
  std::string task_id;                       // empty: the service picks one
  std::map<std::string, std::string> files;  // path in the submission folder -> content
  // A KernelBench pair (docs/kernelbench.md): its name, the pair being files problem.py and
  // solution.py; empty for a submission folder.
  std::string kernelbench;
  std::string suite;  // empty: the service's default
  std::vector<std::string> ops;
  std::string policy;  // empty: the service's default
  std::optional<bool> timing;
  int priority = 0;  // higher runs first
  std::string content_hash;

  json to_json() const;  // as stored; from_stored reads it back
  static TaskRequest from_stored(const json& j);
};

// Throws RequestError(400, field, ...) when a JSON text nests deeper than `max_depth` (checked
// before parsing, so no parser recursion or allocation depends on it).
void check_nesting(const std::string& body, int max_depth);
// Parses and checks one request object (POST /v1/evaluate's body, or one of a batch's tasks;
// `where` prefixes the field names: "" or "tasks[3].").
TaskRequest parse_request(const json& body, const RequestLimits& limits, const std::string& where = "");
// The body as JSON; RequestError(400, "body", ...) when it is not a JSON object.
json parse_body(const std::string& body, const RequestLimits& limits);

// Task ids clients choose: 1 to 128 of [A-Za-z0-9._-], not starting with '.'.
bool valid_task_id(const std::string& id);
std::string new_task_id();  // 32 random hex digits

}  // namespace kg::serve

// Serialising results.json and audit.json so that no byte from a submission can stop the write.
#include "report_json.h"

#include "kernelgate/text_safety.h"

#include <string>
#include <vector>

namespace kg::harness {
namespace {

using nlohmann::json;

// A JSON pointer reference token (RFC 6901): '~' and '/' escaped.
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

void escape_strings(json& j, const std::string& where, std::vector<std::string>* changed) {
  if (j.is_string()) {
    bool escaped = false;
    std::string s = text::utf8_escaped(j.get_ref<const std::string&>(), &escaped);
    if (escaped) {
      j = std::move(s);
      changed->push_back(where);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) escape_strings(j[i], where + "/" + std::to_string(i), changed);
  } else if (j.is_object()) {
    json rebuilt = json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool escaped = false;
      std::string key = text::utf8_escaped(it.key(), &escaped);
      const std::string path = where + "/" + pointer_token(key);
      if (escaped) changed->push_back(path);
      json value = std::move(it.value());
      escape_strings(value, path, changed);
      rebuilt[key] = std::move(value);
    }
    j = std::move(rebuilt);
  }
}

}  // namespace

std::string dump_document(json doc) {
  std::vector<std::string> changed;
  escape_strings(doc, "", &changed);
  if (!changed.empty() && doc.is_object()) doc["non_utf8_escaped"] = {{"note", text::kEscapeNote}, {"fields", changed}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace kg::harness

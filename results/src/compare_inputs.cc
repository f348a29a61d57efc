// The two inputs of `kernelgate compare` (compare.h read_compare_side): a results.json (or the OUT
// folder holding one), or a claims file in JSON or CSV.
#include "kernelgate/compare.h"
#include "kernelgate/op_fields.h"
#include "kernelgate/results.h"
#include "summary_fields.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kg::results {
namespace {

[[noreturn]] void bad(const std::string& where, const std::string& field, const std::string& problem) {
  throw std::runtime_error(where + ": " + field + ": " + problem);
}

const std::set<std::string> kVerdicts = {"pass", "fail", "rejected", "error"};

CompareSide side_of_results(const std::string& path, const json& doc) {
  CompareSide side{path, "results", {}};
  std::vector<OpFields> fields;
  try {
    fields = op_fields_of(ops_of(doc, path));
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw std::runtime_error(what.rfind(path, 0) == 0 ? what : path + ": " + what);
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < fields.size(); ++i) {
    OpFields& f = fields[i];
    if (!seen.insert(overload_name(f.op)).second) bad(path, "ops[" + std::to_string(i) + "].op", "'" + f.op + "' appears twice");
    std::sort(f.rules.begin(), f.rules.end());
    f.rules.erase(std::unique(f.rules.begin(), f.rules.end()), f.rules.end());
    side.ops.push_back({overload_name(f.op), f.verdict, f.speedup, f.rules});
  }
  return side;
}

// One claim, from its operator, verdict and speedup texts; `where` names the file and entry.
SideOp claim_of(const std::string& where, const std::string& op, const std::optional<std::string>& verdict,
                const std::optional<double>& speedup) {
  if (op.empty()) bad(where, "operator", "missing or empty");
  if (verdict && !kVerdicts.count(*verdict)) bad(where, "verdict", "'" + *verdict + "' is not pass, fail, rejected or error");
  if (speedup && !(std::isfinite(*speedup) && *speedup > 0)) bad(where, "speedup", "not a positive number");
  if (!verdict && !speedup) bad(where, "verdict", "neither a verdict nor a speedup is claimed");
  return {overload_name(op), verdict, speedup, {}};
}

void add_claim(CompareSide& side, std::set<std::string>& seen, const std::string& where, SideOp claim) {
  if (!seen.insert(claim.op).second) bad(where, "operator", "'" + claim.op + "' is claimed twice");
  side.ops.push_back(std::move(claim));
}

CompareSide side_of_claims_json(const std::string& path, const json& doc) {
  if (!doc.contains("kernelgate_claims") || doc["kernelgate_claims"] != 1) bad(path, "kernelgate_claims", "missing or not 1");
  if (!doc["claims"].is_array()) bad(path, "claims", "not an array");
  CompareSide side{path, "claims", {}};
  std::set<std::string> seen;
  for (size_t i = 0; i < doc["claims"].size(); ++i) {
    const json& c = doc["claims"][i];
    const std::string where = path + ": claims[" + std::to_string(i) + "]";
    if (!c.is_object()) bad(where, "(the claim)", "not an object");
    if (!c.contains("operator") || !c["operator"].is_string()) bad(where, "operator", "missing or not a string");
    std::optional<std::string> verdict;
    std::optional<double> speedup;
    if (c.contains("verdict") && !c["verdict"].is_null()) {
      if (!c["verdict"].is_string()) bad(where, "verdict", "not a string");
      verdict = c["verdict"].get<std::string>();
    }
    if (c.contains("speedup") && !c["speedup"].is_null()) {
      if (!c["speedup"].is_number()) bad(where, "speedup", "not a number");
      speedup = c["speedup"].get<double>();
    }
    add_claim(side, seen, where, claim_of(where, c["operator"].get<std::string>(), verdict, speedup));
  }
  return side;
}

// RFC 4180 records: fields separated by commas, a quoted field may hold commas, doubled quotes and
// line breaks. Each record with the line it starts on.
std::vector<std::pair<int, std::vector<std::string>>> csv_records(const std::string& text, const std::string& path) {
  std::vector<std::pair<int, std::vector<std::string>>> records;
  std::vector<std::string> fields(1);
  int line = 1, record_line = 1;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') fields.back() += text[++i];
      else if (c == '"') quoted = false;
      else fields.back() += c;
      line += c == '\n';
      continue;
    }
    if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      fields.emplace_back();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any) records.push_back({record_line, fields});
      fields.assign(1, "");
      any = false;
      record_line = ++line;
    } else {
      fields.back() += c;
      any = true;
    }
  }
  if (quoted) throw std::runtime_error(path + ":" + std::to_string(record_line) + ": a quoted field is not closed");
  if (any) records.push_back({record_line, fields});
  return records;
}

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::string read_text(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw std::runtime_error(path + ": not a readable regular file");
  std::ifstream f(path, std::ios::binary);
  std::ostringstream text;
  text << f.rdbuf();
  if (!f) throw std::runtime_error(path + ": cannot read");
  return text.str();
}

CompareSide side_of_claims_csv(const std::string& path) {
  const auto records = csv_records(read_text(path), path);
  if (records.empty()) bad(path + ":1", "header", "missing (expected operator,verdict,speedup)");
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < records[0].second.size(); ++i) column[trimmed(records[0].second[i])] = i;
  if (!column.count("operator")) bad(path + ":1", "header", "no operator column");
  if (!column.count("verdict") && !column.count("speedup")) bad(path + ":1", "header", "neither a verdict nor a speedup column");
  CompareSide side{path, "claims", {}};
  std::set<std::string> seen;
  for (size_t r = 1; r < records.size(); ++r) {
    const auto& [line, fields] = records[r];
    const std::string where = path + ":" + std::to_string(line);
    auto cell = [&](const char* name) -> std::string {
      const auto it = column.find(name);
      return it == column.end() || it->second >= fields.size() ? "" : trimmed(fields[it->second]);
    };
    std::optional<std::string> verdict;
    std::optional<double> speedup;
    if (!cell("verdict").empty()) verdict = cell("verdict");
    if (const std::string s = cell("speedup"); !s.empty()) {
      std::string digits = s.back() == 'x' ? s.substr(0, s.size() - 1) : s;  // "1.8x" as leaderboards write it
      size_t used = 0;
      try {
        speedup = std::stod(digits, &used);
      } catch (const std::exception&) { used = 0; }
      if (used == 0 || used != digits.size()) bad(where, "speedup", "not a number: '" + s + "'");
    }
    add_claim(side, seen, where, claim_of(where, cell("operator"), verdict, speedup));
  }
  return side;
}

}  // namespace

std::string overload_name(const std::string& name) {
  for (const char* prefix : {"aten.", "aten::"})
    if (name.rfind(prefix, 0) == 0) return name.substr(std::string(prefix).size());
  return name;
}

CompareSide read_compare_side(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    const std::string file = (std::filesystem::path(path) / "results.json").string();
    return side_of_results(file, read_document(file));
  }
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".csv" || ext == ".CSV") return side_of_claims_csv(path);
  const json doc = read_document(path);
  if (doc.contains("claims") || doc.contains("kernelgate_claims")) return side_of_claims_json(path, doc);
  if (doc.contains("ops")) return side_of_results(path, doc);
  throw std::runtime_error(path + ": neither a results.json (no ops) nor a claims file (no claims)");
}

}  // namespace kg::results

// `kernelgate merge`: shard outputs of one run combined into the output of the whole run. Every
// input is read and checked before anything is written, so a refused merge leaves OUT as it was.
#include "kernelgate/report_html.h"
#include "kernelgate/results.h"
#include "summary_fields.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kg::results {
namespace {

namespace fs = std::filesystem;

struct ShardInput {
  std::string summary_path;  // DIR/summary.json
  std::string dir;
  RunIdentity id;
  std::vector<std::string> submissions;
};

[[noreturn]] void refuse(const std::string& what) { throw std::runtime_error(what); }

// A submission's folder under OUT: one plain path component, so no summary.json can point a read
// or a write outside the folders given.
std::string folder_name(const json& entry, const std::string& source, size_t i) {
  const std::string field = source + ": submissions[" + std::to_string(i) + "].name";
  if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string()) refuse(field + ": missing or not a string");
  const std::string name = entry["name"].get<std::string>();
  if (name.empty() || name == "." || name == ".." || name.find_first_of(std::string("/\0", 2)) != std::string::npos)
    refuse(field + ": not a folder name: '" + name + "'");
  return name;
}

ShardInput read_shard(const std::string& dir) {
  ShardInput s;
  s.dir = dir;
  s.summary_path = (fs::path(dir) / "summary.json").string();
  const json doc = read_document(s.summary_path);
  if (doc.value("kernelgate_summary", json()) != json(1))
    refuse(s.summary_path + ": kernelgate_summary: missing or not 1 (not a batch summary)");
  if (!doc.contains("run")) refuse(s.summary_path + ": run: missing");
  s.id = identity_from_json(doc["run"], s.summary_path + ": run");
  if (!doc.contains("submissions") || !doc["submissions"].is_array()) refuse(s.summary_path + ": submissions: missing or not an array");
  const json& entries = doc["submissions"];
  std::set<std::string> seen;
  for (size_t i = 0; i < entries.size(); ++i) {
    s.submissions.push_back(folder_name(entries[i], s.summary_path, i));
    if (!seen.insert(s.submissions.back()).second)
      refuse(s.summary_path + ": submissions[" + std::to_string(i) + "].name: " + s.submissions.back() + " is listed twice");
  }
  return s;
}

// The shards are of one run, each index once, none missing.
void check_one_run(const std::vector<ShardInput>& shards) {
  const ShardInput& first = shards.front();
  std::map<int, std::string> by_index;
  for (const ShardInput& s : shards) {
    const std::string differ = identity_mismatch(first.id, s.id);
    if (!differ.empty()) refuse(s.summary_path + ": run: " + differ + " against " + first.summary_path + ": not shards of one run");
    if (s.id.shard_count != first.id.shard_count)
      refuse(s.summary_path + ": run: shard.count: " + std::to_string(s.id.shard_count) + ", but " + first.summary_path + " has " +
             std::to_string(first.id.shard_count));
    const auto [it, fresh] = by_index.emplace(s.id.shard_index, s.dir);
    if (!fresh)
      refuse("shard " + std::to_string(s.id.shard_index) + " of " + std::to_string(first.id.shard_count) + " given twice: " + it->second +
             " and " + s.dir);
  }
  std::string missing;
  for (int i = 0; i < first.id.shard_count; ++i)
    if (!by_index.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
  if (!missing.empty())
    refuse("shards missing: " + missing + " of " + std::to_string(first.id.shard_count) + " (run.shard.index; " +
           std::to_string(shards.size()) + " shard folders given)");
}

struct Part {
  std::string path;  // DIR/NAME/results.json
  json doc;
};

// A results.json names the run it belongs to; one from another run, put in a shard's folder, is
// refused rather than merged under this run's identity.
void check_part_of_shard(const Part& p, const ShardInput& shard) {
  const std::vector<std::pair<const char*, json>> fields = {{"kernelgate_version", shard.id.kernelgate_version},
                                                            {"torch_version", shard.id.torch_version},
                                                            {"device", shard.id.device},
                                                            {"suite", shard.id.suite},
                                                            {"policy", shard.id.policy},
                                                            {"seed", shard.id.seed}};
  for (const auto& [key, expected] : fields) {
    const json got = p.doc.value(key, json());
    if (got != expected) refuse(p.path + ": " + key + ": " + got.dump() + ", but " + shard.summary_path + "'s run has " + expected.dump());
  }
}

double wall_seconds_of(const Part& p) {
  if (!p.doc.contains("summary") || !p.doc["summary"].is_object()) refuse(p.path + ": summary: missing or not an object");
  const json& summary = p.doc["summary"];
  if (!summary.contains("wall_seconds") || !summary["wall_seconds"].is_number())
    refuse(p.path + ": summary.wall_seconds: missing or not a number");
  return summary["wall_seconds"].get<double>();
}

struct SourcedOp {
  std::string name;
  size_t part;
  size_t index;  // in its part's ops
};

// Every part's ops, sorted by op name; an op judged by two shards is refused.
std::vector<SourcedOp> gathered_ops(const std::vector<Part>& parts) {
  std::vector<SourcedOp> ops;
  std::map<std::string, std::string> judged_in;
  for (size_t p = 0; p < parts.size(); ++p) {
    const json& part_ops = ops_of(parts[p].doc, parts[p].path);
    std::vector<OpFields> fields;
    try {
      fields = op_fields_of(part_ops);
    } catch (const std::exception& e) { refuse(parts[p].path + ": " + e.what()); }
    for (size_t i = 0; i < fields.size(); ++i) {
      const auto [it, fresh] = judged_in.emplace(fields[i].op, parts[p].path);
      if (!fresh) refuse(parts[p].path + ": ops[" + std::to_string(i) + "]: op " + fields[i].op + " is also in " + it->second);
      ops.push_back({fields[i].op, p, i});
    }
  }
  std::stable_sort(ops.begin(), ops.end(), [](const SourcedOp& a, const SourcedOp& b) { return a.name < b.name; });
  return ops;
}

// The strings dump escaped (results.json's "non_utf8_escaped"), their JSON pointers moved with
// the ops to where the merged document holds them, in the order a writer of the whole run lists
// them (its members in key order, the ops in order).
json merged_escapes(const std::vector<Part>& parts, const std::vector<SourcedOp>& ops) {
  std::map<std::pair<size_t, size_t>, size_t> new_index;
  for (size_t i = 0; i < ops.size(); ++i) new_index[{ops[i].part, ops[i].index}] = i;
  std::vector<std::vector<std::string>> per_op(ops.size());
  std::vector<std::string> fields;
  json note;
  for (size_t p = 0; p < parts.size(); ++p) {
    if (!parts[p].doc.contains("non_utf8_escaped")) continue;
    const json& esc = parts[p].doc["non_utf8_escaped"];
    if (!esc.is_object() || !esc.contains("fields") || !esc["fields"].is_array())
      refuse(parts[p].path + ": non_utf8_escaped.fields: missing or not an array");
    if (note.is_null() && esc.contains("note")) note = esc["note"];
    for (const json& f : esc["fields"]) {
      if (!f.is_string()) refuse(parts[p].path + ": non_utf8_escaped.fields: not an array of strings");
      const std::string pointer = f.get<std::string>();
      if (pointer.rfind("/ops/", 0) != 0) {
        if (p == 0) fields.push_back(pointer);  // the identity and problems: the same in every part
        continue;
      }
      const size_t end = pointer.find('/', 5);
      const std::string token = pointer.substr(5, end == std::string::npos ? std::string::npos : end - 5);
      const auto it = token.empty() || token.find_first_not_of("0123456789") != std::string::npos ? new_index.end()
                                                                                                  : new_index.find({p, std::stoul(token)});
      if (it == new_index.end()) refuse(parts[p].path + ": non_utf8_escaped.fields: " + pointer + ": no such op");
      per_op[it->second].push_back("/ops/" + std::to_string(it->second) + (end == std::string::npos ? "" : pointer.substr(end)));
    }
  }
  for (const auto& list : per_op) fields.insert(fields.end(), list.begin(), list.end());
  const auto member = [](const std::string& pointer) { return pointer.substr(1, pointer.find('/', 1) - 1); };
  std::stable_sort(fields.begin(), fields.end(), [&](const std::string& a, const std::string& b) { return member(a) < member(b); });
  if (fields.empty()) return json();
  return {{"note", note}, {"fields", fields}};
}

json merged_results(const std::vector<Part>& parts) {
  const Part& first = parts.front();
  for (const Part& p : parts)
    if (p.doc.value("submission", json()) != first.doc.value("submission", json()))
      refuse(p.path + ": submission: " + p.doc.value("submission", json()).dump() + ", but " + first.path + " has " +
             first.doc.value("submission", json()).dump());
  const std::vector<SourcedOp> sourced = gathered_ops(parts);
  double wall_s = 0;
  for (const Part& p : parts) wall_s += wall_seconds_of(p);
  json ops = json::array();
  for (const SourcedOp& o : sourced) ops.push_back(parts[o.part].doc["ops"][o.index]);
  json doc = first.doc;
  const json escapes = merged_escapes(parts, sourced);
  doc.erase("non_utf8_escaped");
  if (!escapes.is_null()) doc["non_utf8_escaped"] = escapes;
  doc["summary"] = summary_of_ops(ops, wall_s);
  doc["ops"] = std::move(ops);
  return doc;
}

std::string dumped(const json& doc) { return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

void refuse_out_among_shards(const std::vector<ShardInput>& shards, const std::string& out_dir) {
  std::error_code ec;
  for (const ShardInput& s : shards)
    if (fs::equivalent(s.dir, out_dir, ec)) refuse(out_dir + ": the output folder is one of the shard folders");
}

}  // namespace

std::vector<BatchEntry> merge(const std::vector<std::string>& shard_dirs, const std::string& out_dir) {
  if (shard_dirs.empty()) refuse("merge: no shard folders given");
  std::vector<ShardInput> shards;
  for (const std::string& dir : shard_dirs) shards.push_back(read_shard(dir));
  check_one_run(shards);
  refuse_out_among_shards(shards, out_dir);

  std::map<std::string, std::vector<Part>> parts;  // by submission name: sorted
  for (const ShardInput& s : shards)
    for (const std::string& name : s.submissions) {
      const std::string path = (fs::path(s.dir) / name / "results.json").string();
      parts[name].push_back({path, read_document(path)});
      check_part_of_shard(parts[name].back(), s);
    }
  std::vector<BatchEntry> entries;
  for (const auto& [name, list] : parts) entries.push_back({name, merged_results(list)});

  RunIdentity whole = shards.front().id;
  whole.shard_index = 0;
  whole.shard_count = 1;
  const json summary = batch_summary_json(whole, entries);
  fs::create_directories(out_dir);
  for (const BatchEntry& e : entries) {
    fs::create_directories(fs::path(out_dir) / e.name);
    write_atomically((fs::path(out_dir) / e.name / "results.json").string(), dumped(e.results));
  }
  write_atomically((fs::path(out_dir) / "summary.csv").string(), batch_summary_csv(entries));
  write_atomically((fs::path(out_dir) / "summary.md").string(), batch_summary_markdown(whole, entries));
  write_batch_reports(out_dir, whole, entries);
  write_atomically((fs::path(out_dir) / "summary.json").string(), dumped(summary));
  return entries;
}

}  // namespace kg::results

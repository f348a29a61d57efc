// What a run is (results.h RunIdentity): its JSON form, reading it back with errors naming the
// field, and the first field in which two runs differ.
#include "kernelgate/results.h"

#include <algorithm>
#include <stdexcept>

namespace kg::results {
namespace {

// "number 1.5", "string", "null": the JSON type, with the value when it is a number or boolean
// (a seed of -1 or 1.5 is a number, but not one a seed can be).
std::string kind_of(const json& v) {
  if (v.is_number() || v.is_boolean()) return std::string(v.type_name()) + " " + v.dump();
  return v.type_name();
}

class FieldReader {
 public:
  FieldReader(const json& j, std::string source) : j_(j), source_(std::move(source)) {
    if (!j_.is_object()) throw std::runtime_error(source_ + ": expected an object, got " + std::string(j_.type_name()));
  }

  const json& field(const json& parent, const std::string& path, const std::string& key) const {
    const auto it = parent.find(key);
    if (it == parent.end()) fail(path, "missing");
    return *it;
  }
  const json& field(const std::string& key) const { return field(j_, key, key); }

  [[noreturn]] void fail(const std::string& path, const std::string& problem) const {
    throw std::runtime_error(source_ + ": " + path + ": " + problem);
  }
  void expect(bool ok, const json& v, const std::string& path, const char* wanted) const {
    if (!ok) fail(path, std::string("expected ") + wanted + ", got " + kind_of(v));
  }

  std::string string(const std::string& key) const {
    const json& v = field(key);
    expect(v.is_string(), v, key, "a string");
    return v.get<std::string>();
  }
  uint64_t unsigned_integer(const json& v, const std::string& path) const {
    // is_number_integer() holds for both of nlohmann's integer kinds: text reads as unsigned, but a
    // document built in memory from an int holds a signed one.
    expect(v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0), v, path, "a non-negative integer");
    return v.get<uint64_t>();
  }
  bool boolean(const std::string& key) const {
    const json& v = field(key);
    expect(v.is_boolean(), v, key, "a boolean");
    return v.get<bool>();
  }
  std::vector<std::string> strings(const std::string& key) const {
    const json& v = field(key);
    expect(v.is_array(), v, key, "an array of strings");
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) {
      expect(v[i].is_string(), v[i], key + "[" + std::to_string(i) + "]", "a string");
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }

 private:
  const json& j_;
  std::string source_;
};

std::string shown(const std::vector<std::string>& ops) {
  if (ops.empty()) return "every op";
  std::string s;
  for (const auto& op : ops) s += (s.empty() ? "" : ",") + op;
  return s;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

json identity_json(const RunIdentity& id) {
  return {{"kernelgate_version", id.kernelgate_version},
          {"torch_version", id.torch_version},
          {"device", id.device},
          {"suite", id.suite},
          {"policy", id.policy},
          {"seed", id.seed},
          {"timing", id.timing},
          {"ops", id.ops},
          {"shard", {{"index", id.shard_index}, {"count", id.shard_count}}}};
}

RunIdentity identity_from_json(const json& j, const std::string& source) {
  const FieldReader r(j, source);
  RunIdentity id;
  id.kernelgate_version = r.string("kernelgate_version");
  id.torch_version = r.string("torch_version");
  id.device = r.string("device");
  id.suite = r.string("suite");
  id.policy = r.string("policy");
  id.seed = r.unsigned_integer(r.field("seed"), "seed");
  id.timing = r.boolean("timing");
  id.ops = r.strings("ops");
  const json& shard = r.field("shard");
  r.expect(shard.is_object(), shard, "shard", "an object");
  const uint64_t index = r.unsigned_integer(r.field(shard, "shard.index", "index"), "shard.index");
  const uint64_t count = r.unsigned_integer(r.field(shard, "shard.count", "count"), "shard.count");
  if (count < 1 || count > 1000000000) r.fail("shard.count", "expected 1 to 1000000000, got " + std::to_string(count));
  if (index >= count) r.fail("shard.index", "expected 0 to " + std::to_string(count - 1) + ", got " + std::to_string(index));
  id.shard_index = static_cast<int>(index);
  id.shard_count = static_cast<int>(count);
  return id;
}

std::string identity_mismatch(const RunIdentity& a, const RunIdentity& b) {
  const auto differ = [](const char* field, const std::string& x, const std::string& y) {
    return std::string(field) + " (" + x + " vs " + y + ")";
  };
  if (a.kernelgate_version != b.kernelgate_version) return differ("kernelgate_version", a.kernelgate_version, b.kernelgate_version);
  if (a.torch_version != b.torch_version) return differ("torch_version", a.torch_version, b.torch_version);
  if (a.device != b.device) return differ("device", a.device, b.device);
  if (a.suite != b.suite) return differ("suite", a.suite, b.suite);
  if (a.policy != b.policy) return differ("policy", a.policy, b.policy);
  if (a.seed != b.seed) return differ("seed", std::to_string(a.seed), std::to_string(b.seed));
  if (a.timing != b.timing) return differ("timing", a.timing ? "true" : "false", b.timing ? "true" : "false");
  // --ops relu,add and --ops add,relu pick the same ops: the same run.
  if (sorted(a.ops) != sorted(b.ops)) return differ("ops", shown(a.ops), shown(b.ops));
  return "";
}

}  // namespace kg::results

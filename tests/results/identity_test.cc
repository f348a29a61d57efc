// ResultsIdentity: a run's identity through JSON and back, the errors for a missing or mistyped
// field (naming the source and the field), and the first field in which two runs differ.
#include "kernelgate/results.h"
#include "merge_fixtures.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace kg::results {
namespace {

RunIdentity sample() {
  RunIdentity id = kg::results::testing::smoke_identity();
  id.ops = {"relu", "add"};
  id.shard_index = 2;
  id.shard_count = 4;
  return id;
}

void expect_same(const RunIdentity& a, const RunIdentity& b) {
  EXPECT_EQ(a.kernelgate_version, b.kernelgate_version);
  EXPECT_EQ(a.torch_version, b.torch_version);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.suite, b.suite);
  EXPECT_EQ(a.policy, b.policy);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.timing, b.timing);
  EXPECT_EQ(a.ops, b.ops);
  EXPECT_EQ(a.shard_index, b.shard_index);
  EXPECT_EQ(a.shard_count, b.shard_count);
}

// The message identity_from_json throws; "" when it does not throw.
std::string error_of(const json& j) {
  try {
    identity_from_json(j, "OUT/summary.json");
  } catch (const std::runtime_error& e) { return e.what(); }
  return "";
}

TEST(ResultsIdentity, KeysAreTheDocumentedOnes) {
  const json j = identity_json(sample());
  EXPECT_EQ(j, json::parse(R"({"kernelgate_version": "0.9.0", "torch_version": "2.5.1", "device": "cpu", "suite": "smoke",
                               "policy": "competition", "seed": 7, "timing": false, "ops": ["relu", "add"],
                               "shard": {"index": 2, "count": 4}})"));
}

TEST(ResultsIdentity, RoundTripsThroughText) {
  const RunIdentity id = sample();
  expect_same(identity_from_json(json::parse(identity_json(id).dump()), "x"), id);
  RunIdentity whole;  // the defaults: every op, timing on, the whole run
  expect_same(identity_from_json(json::parse(identity_json(whole).dump()), "x"), whole);
}

TEST(ResultsIdentity, RoundTripsInMemory) {
  // identity_json's shard holds ints (signed JSON integers), text reads back unsigned ones: both are read
  const RunIdentity id = sample();
  expect_same(identity_from_json(identity_json(id), "x"), id);
  json j = identity_json(id);
  j["seed"] = 7;  // an int, not a uint64_t
  EXPECT_EQ(identity_from_json(j, "x").seed, 7u);
}

TEST(ResultsIdentity, SeedKeepsAll64Bits) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{1} << 53, (uint64_t{1} << 53) + 1, std::numeric_limits<uint64_t>::max()}) {
    RunIdentity id = sample();
    id.seed = seed;
    const std::string text = identity_json(id).dump();
    EXPECT_NE(text.find("\"seed\":" + std::to_string(seed)), std::string::npos) << text;
    EXPECT_EQ(identity_from_json(json::parse(text), "x").seed, seed);
  }
}

TEST(ResultsIdentity, MissingFieldIsNamed) {
  for (const char* field : {"kernelgate_version", "torch_version", "device", "suite", "policy", "seed", "timing", "ops", "shard"}) {
    json j = identity_json(sample());
    j.erase(field);
    EXPECT_EQ(error_of(j), std::string("OUT/summary.json: ") + field + ": missing");
  }
  json j = identity_json(sample());
  j["shard"].erase("count");
  EXPECT_EQ(error_of(j), "OUT/summary.json: shard.count: missing");
}

TEST(ResultsIdentity, MistypedFieldSaysWhatWasExpectedAndWhatCame) {
  const auto with = [](const char* field, json value) {
    json j = identity_json(sample());
    j[field] = std::move(value);
    return error_of(j);
  };
  EXPECT_EQ(with("suite", 3), "OUT/summary.json: suite: expected a string, got number 3");
  EXPECT_EQ(with("device", nullptr), "OUT/summary.json: device: expected a string, got null");
  EXPECT_EQ(with("timing", "yes"), "OUT/summary.json: timing: expected a boolean, got string");
  EXPECT_EQ(with("seed", "7"), "OUT/summary.json: seed: expected a non-negative integer, got string");
  EXPECT_EQ(with("seed", -1), "OUT/summary.json: seed: expected a non-negative integer, got number -1");
  EXPECT_EQ(with("seed", 1.5), "OUT/summary.json: seed: expected a non-negative integer, got number 1.5");
  EXPECT_EQ(with("ops", "relu"), "OUT/summary.json: ops: expected an array of strings, got string");
  EXPECT_EQ(with("ops", json::array({"relu", 2})), "OUT/summary.json: ops[1]: expected a string, got number 2");
  EXPECT_EQ(with("shard", "0/1"), "OUT/summary.json: shard: expected an object, got string");
  EXPECT_EQ(error_of(json::array()), "OUT/summary.json: expected an object, got array");
}

TEST(ResultsIdentity, SeedBeyond64BitsIsRefused) {
  // nlohmann reads an integer past 2^64-1 as a float: refused rather than rounded to another seed.
  json j = json::parse(R"({"kernelgate_version": "v", "torch_version": "t", "device": "cpu", "suite": "smoke", "policy": "p",
                           "seed": 18446744073709551616, "timing": true, "ops": [], "shard": {"index": 0, "count": 1}})");
  EXPECT_EQ(error_of(j).rfind("OUT/summary.json: seed: expected a non-negative integer, got number ", 0), 0u) << error_of(j);
}

TEST(ResultsIdentity, ShardOutOfRangeIsRefused) {
  json j = identity_json(sample());
  j["shard"] = {{"index", 4}, {"count", 4}};
  EXPECT_EQ(error_of(j), "OUT/summary.json: shard.index: expected 0 to 3, got 4");
  j["shard"] = {{"index", 0}, {"count", 0}};
  EXPECT_EQ(error_of(j), "OUT/summary.json: shard.count: expected 1 to 1000000000, got 0");
  j["shard"] = {{"index", -1}, {"count", 2}};
  EXPECT_EQ(error_of(j), "OUT/summary.json: shard.index: expected a non-negative integer, got number -1");
}

TEST(ResultsIdentity, MismatchNamesTheFirstDifferingField) {
  const RunIdentity a = sample();
  const auto changed = [&](auto edit) {
    RunIdentity b = a;
    edit(b);
    return identity_mismatch(a, b);
  };
  EXPECT_EQ(changed([](RunIdentity& b) { b.kernelgate_version = "1.0.0"; }), "kernelgate_version (0.9.0 vs 1.0.0)");
  EXPECT_EQ(changed([](RunIdentity& b) { b.torch_version = "2.6.0"; }), "torch_version (2.5.1 vs 2.6.0)");
  EXPECT_EQ(changed([](RunIdentity& b) { b.device = "NVIDIA H200"; }), "device (cpu vs NVIDIA H200)");
  EXPECT_EQ(changed([](RunIdentity& b) { b.suite = "edge"; }), "suite (smoke vs edge)");
  EXPECT_EQ(changed([](RunIdentity& b) { b.policy = "research"; }), "policy (competition vs research)");
  EXPECT_EQ(changed([](RunIdentity& b) { b.seed = 8; }), "seed (7 vs 8)");
  EXPECT_EQ(changed([](RunIdentity& b) { b.timing = true; }), "timing (false vs true)");
  EXPECT_EQ(changed([](RunIdentity& b) { b.ops = {}; }), "ops (relu,add vs every op)");
  EXPECT_EQ(changed([](RunIdentity& b) { b.ops = {"relu"}; }), "ops (relu,add vs relu)");
  EXPECT_EQ(changed([](RunIdentity& b) {
              b.suite = "edge";
              b.seed = 9;
            }),
            "suite (smoke vs edge)");
}

TEST(ResultsIdentity, SameRunWhateverTheShardOrTheOrderOfOps) {
  const RunIdentity a = sample();
  RunIdentity b = a;
  b.shard_index = 0;
  b.shard_count = 1;
  b.ops = {"add", "relu"};
  EXPECT_EQ(identity_mismatch(a, b), "");
  EXPECT_EQ(identity_mismatch(a, a), "");
}

}  // namespace
}  // namespace kg::results

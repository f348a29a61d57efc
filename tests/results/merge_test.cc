// kernelgate merge's library side: shard folders written here from JSON, merged, compared with
// the documents of the same run unsharded; and every refusal naming its folder and field.
#include "merge_fixtures.h"

#include <gtest/gtest.h>

#include <functional>

namespace kg::results {
namespace {

using testing::op_json;
using testing::read_json;
using testing::read_text;
using testing::results_json;
using testing::run_identity;
using testing::scratch;
using testing::write_shard;
using testing::write_text;
namespace fs = std::filesystem;

// The whole run: two submissions, five ops between them.
json alpha_ops() {
  return json::array({op_json("add.Tensor", "pass", 4, 4, 1.5, {}, {}, {1.25, 1.75}),
                      op_json("mm.default", "fail", 3, 1, std::nullopt, {}, {"value_mismatch"}),
                      op_json("relu.default", "pass", 2, 2, 3.0)});
}
json beta_ops() {
  return json::array(
      {op_json("relu.default", "rejected", 2, 2, std::nullopt, {"timing_cheat"}), op_json("sum.dim_IntList", "pass", 5, 5, 0.75)});
}

json pick(const json& ops, std::initializer_list<size_t> which) {
  json out = json::array();
  for (size_t i : which) out.push_back(ops[i]);
  return out;
}

// Three shards of the run, alpha's ops over all three (out of name order), beta's over two.
std::vector<std::string> three_shards(const fs::path& base) {
  const fs::path s0 = base / "shard-0", s1 = base / "shard-1", s2 = base / "shard-2";
  write_shard(s0, run_identity(0, 3), {{"alpha", pick(alpha_ops(), {2})}, {"beta", pick(beta_ops(), {1})}}, 1.0);
  write_shard(s1, run_identity(1, 3), {{"alpha", pick(alpha_ops(), {0})}}, 2.0);
  write_shard(s2, run_identity(2, 3), {{"alpha", pick(alpha_ops(), {1})}, {"beta", pick(beta_ops(), {0})}}, 4.0);
  return {s2.string(), s0.string(), s1.string()};  // the order on the command line does not matter
}

TEST(Merge, ThreeShardsGiveTheDocumentsOfTheUnshardedRun) {
  const fs::path base = scratch("merge-three");
  const fs::path out = base / "out";
  const std::vector<BatchEntry> entries = merge(three_shards(base), out.string());

  const json alpha = results_json(run_identity(), "alpha", alpha_ops(), 1.0 + 2.0 + 4.0);
  const json beta = results_json(run_identity(), "beta", beta_ops(), 1.0 + 4.0);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "alpha");
  EXPECT_EQ(entries[0].results, alpha);
  EXPECT_EQ(read_json(out / "alpha" / "results.json"), alpha);
  EXPECT_EQ(read_json(out / "beta" / "results.json"), beta);
  EXPECT_EQ(read_json(out / "alpha" / "results.json")["summary"]["wall_seconds"], 7.0);

  const std::vector<BatchEntry> whole = {{"alpha", alpha}, {"beta", beta}};
  const json summary = read_json(out / "summary.json");
  EXPECT_EQ(summary, batch_summary_json(run_identity(0, 1), whole));
  EXPECT_EQ(summary["run"]["shard"], (json{{"index", 0}, {"count", 1}}));
  EXPECT_EQ(read_text(out / "summary.csv"), batch_summary_csv(whole));
  EXPECT_EQ(read_text(out / "summary.md"), batch_summary_markdown(run_identity(0, 1), whole));
  EXPECT_EQ(batch_exit_code(entries), 1);
  for (const auto& e : fs::recursive_directory_iterator(out))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << "temporary file left: " << e.path();
}

TEST(Merge, OneUnshardedOutputMergesToItself) {
  const fs::path base = scratch("merge-one");
  write_shard(base / "only", run_identity(), {{"alpha", alpha_ops()}}, 3.0);
  const auto entries = merge({(base / "only").string()}, (base / "out").string());
  EXPECT_EQ(read_json(base / "out" / "alpha" / "results.json"), read_json(base / "only" / "alpha" / "results.json"));
  EXPECT_EQ(read_json(base / "out" / "summary.json"), read_json(base / "only" / "summary.json"));
}

TEST(Merge, EscapedStringPointersFollowTheirOps) {
  const fs::path base = scratch("merge-escapes");
  write_shard(base / "s0", run_identity(0, 2), {{"alpha", pick(alpha_ops(), {2})}});
  write_shard(base / "s1", run_identity(1, 2), {{"alpha", pick(alpha_ops(), {0, 1})}});
  // As the writer marks them: the submission path, and strings of op 0 in each part.
  json part0 = read_json(base / "s0" / "alpha" / "results.json");
  part0["non_utf8_escaped"] = {{"note", "escaped"}, {"fields", {"/ops/0/failures/0/evidence/message", "/submission"}}};
  write_text(base / "s0" / "alpha" / "results.json", part0.dump(2));
  json part1 = read_json(base / "s1" / "alpha" / "results.json");
  part1["non_utf8_escaped"] = {{"note", "escaped"}, {"fields", {"/ops/1/op", "/submission"}}};
  write_text(base / "s1" / "alpha" / "results.json", part1.dump(2));

  merge({(base / "s0").string(), (base / "s1").string()}, (base / "out").string());
  const json merged = read_json(base / "out" / "alpha" / "results.json");
  // relu.default (s0's op 0) is the merged op 2, mm.default (s1's op 1) the merged op 1.
  EXPECT_EQ(merged["non_utf8_escaped"]["fields"], (json{"/ops/1/op", "/ops/2/failures/0/evidence/message", "/submission"}));
  EXPECT_EQ(merged["non_utf8_escaped"]["note"], "escaped");
}

// What merge throws for shard folders prepared by `prepare` (given the base folder).
std::string refusal(const std::string& name, const std::function<std::vector<std::string>(const fs::path&)>& prepare) {
  const fs::path base = scratch("merge-refuse-" + name);
  const std::vector<std::string> dirs = prepare(base);
  try {
    merge(dirs, (base / "out").string());
  } catch (const std::runtime_error& e) {
    EXPECT_FALSE(fs::exists(base / "out" / "summary.json")) << "a refused merge wrote its output";
    EXPECT_FALSE(fs::exists(base / "out" / "alpha")) << "a refused merge wrote a results.json";
    return e.what();
  }
  ADD_FAILURE() << name << ": merged";
  return "";
}

// Two shards of a run whose second shard ran with `change` applied to its identity.
std::vector<std::string> mismatched(const fs::path& base, const std::function<void(RunIdentity&)>& change) {
  RunIdentity other = run_identity(1, 2);
  change(other);
  write_shard(base / "s0", run_identity(0, 2), {{"alpha", pick(alpha_ops(), {0})}});
  write_shard(base / "s1", other, {{"alpha", pick(alpha_ops(), {1})}});
  return {(base / "s0").string(), (base / "s1").string()};
}

TEST(MergeRefuses, ShardsOfDifferentRunsNamingTheFolderAndTheField) {
  const std::vector<std::pair<std::string, std::function<void(RunIdentity&)>>> changes = {
      {"policy", [](RunIdentity& id) { id.policy = "audit"; }},
      {"suite", [](RunIdentity& id) { id.suite = "edge"; }},
      {"kernelgate_version", [](RunIdentity& id) { id.kernelgate_version = "0.9.1"; }},
      {"torch_version", [](RunIdentity& id) { id.torch_version = "2.6.0"; }},
      {"device", [](RunIdentity& id) { id.device = "cuda:0 NVIDIA H200"; }},
      {"seed", [](RunIdentity& id) { id.seed = 2; }},
      {"timing", [](RunIdentity& id) { id.timing = false; }},
      {"ops", [](RunIdentity& id) { id.ops = {"relu.default"}; }},
  };
  for (const auto& [field, change] : changes) {
    const std::string what = refusal(field, [&](const fs::path& base) { return mismatched(base, change); });
    EXPECT_NE(what.find("/s1/summary.json: run: " + field + " ("), std::string::npos) << what;
    EXPECT_NE(what.find("/s0/summary.json"), std::string::npos) << what;
    EXPECT_NE(what.find("not shards of one run"), std::string::npos) << what;
  }
}

TEST(MergeRefuses, ShardCountsThatDiffer) {
  const std::string what = refusal("count", [](const fs::path& base) {
    return mismatched(base, [](RunIdentity& id) {
      id.shard_index = 1;
      id.shard_count = 3;
    });
  });
  EXPECT_NE(what.find("/s1/summary.json: run: shard.count: 3, but "), std::string::npos) << what;
  EXPECT_NE(what.find("/s0/summary.json has 2"), std::string::npos) << what;
}

TEST(MergeRefuses, AShardGivenTwiceOrMissing) {
  std::string what = refusal("twice", [](const fs::path& base) {
    auto dirs = mismatched(base, [](RunIdentity& id) { id.shard_index = 0; });
    return dirs;
  });
  EXPECT_NE(what.find("shard 0 of 2 given twice: "), std::string::npos) << what;
  EXPECT_NE(what.find("/s0 and "), std::string::npos) << what;
  EXPECT_NE(what.find("/s1"), std::string::npos) << what;

  what = refusal("same-folder", [](const fs::path& base) {
    auto dirs = mismatched(base, [](RunIdentity&) {});
    return std::vector<std::string>{dirs[0], dirs[1], dirs[0]};
  });
  EXPECT_NE(what.find("shard 0 of 2 given twice"), std::string::npos) << what;

  what = refusal("missing", [](const fs::path& base) {
    auto dirs = three_shards(base);
    return std::vector<std::string>{dirs[1]};  // shard-0 only
  });
  EXPECT_NE(what.find("shards missing: 1, 2 of 3"), std::string::npos) << what;
}

TEST(MergeRefuses, UnreadableAndCorruptFilesNamingThePath) {
  std::string what = refusal("no-summary", [](const fs::path& base) {
    auto dirs = three_shards(base);
    fs::remove(fs::path(dirs[0]) / "summary.json");
    return dirs;
  });
  EXPECT_NE(what.find("/shard-2/summary.json: cannot open"), std::string::npos) << what;

  what = refusal("not-json", [](const fs::path& base) {
    auto dirs = three_shards(base);
    write_text(fs::path(dirs[1]) / "beta" / "results.json", "{\"ops\": [");
    return dirs;
  });
  EXPECT_NE(what.find("/shard-0/beta/results.json: not JSON"), std::string::npos) << what;

  what = refusal("no-results", [](const fs::path& base) {
    auto dirs = three_shards(base);
    fs::remove(fs::path(dirs[2]) / "alpha" / "results.json");
    return dirs;
  });
  EXPECT_NE(what.find("/shard-1/alpha/results.json: cannot open"), std::string::npos) << what;

  what = refusal("bad-op", [](const fs::path& base) {
    auto dirs = three_shards(base);
    const fs::path p = fs::path(dirs[0]) / "alpha" / "results.json";
    json doc = read_json(p);
    doc["ops"][0]["verdict"] = 3;
    write_text(p, doc.dump());
    return dirs;
  });
  EXPECT_NE(what.find("/shard-2/alpha/results.json: ops[0] (mm.default): verdict: not a string"), std::string::npos) << what;

  what = refusal("no-run", [](const fs::path& base) {
    auto dirs = three_shards(base);
    const fs::path p = fs::path(dirs[2]) / "summary.json";
    json doc = read_json(p);
    doc["run"].erase("seed");
    write_text(p, doc.dump());
    return dirs;
  });
  EXPECT_NE(what.find("/shard-1/summary.json: run: seed: missing"), std::string::npos) << what;

  what = refusal("not-a-summary", [](const fs::path& base) {
    auto dirs = three_shards(base);
    write_text(fs::path(dirs[0]) / "summary.json", "{\"ops\": []}");
    return dirs;
  });
  EXPECT_NE(what.find("/shard-2/summary.json: kernelgate_summary: missing"), std::string::npos) << what;

  what = refusal("no-wall", [](const fs::path& base) {
    auto dirs = three_shards(base);
    const fs::path p = fs::path(dirs[1]) / "alpha" / "results.json";
    json doc = read_json(p);
    doc["summary"].erase("wall_seconds");
    write_text(p, doc.dump());
    return dirs;
  });
  EXPECT_NE(what.find("/shard-0/alpha/results.json: summary.wall_seconds: missing"), std::string::npos) << what;
}

TEST(MergeRefuses, AnOpJudgedTwiceAResultsJsonOfAnotherRunOrSubmissionAndAnEscapingName) {
  std::string what = refusal("op-twice", [](const fs::path& base) {
    write_shard(base / "s0", run_identity(0, 2), {{"alpha", pick(alpha_ops(), {0, 1})}});
    write_shard(base / "s1", run_identity(1, 2), {{"alpha", pick(alpha_ops(), {1})}});
    return std::vector<std::string>{(base / "s0").string(), (base / "s1").string()};
  });
  EXPECT_NE(what.find("/s1/alpha/results.json: ops[0]: op mm.default is also in "), std::string::npos) << what;
  EXPECT_NE(what.find("/s0/alpha/results.json"), std::string::npos) << what;

  what = refusal("other-run", [](const fs::path& base) {
    auto dirs = mismatched(base, [](RunIdentity&) {});
    const fs::path p = fs::path(dirs[1]) / "alpha" / "results.json";
    json doc = read_json(p);
    doc["policy"] = "audit";
    write_text(p, doc.dump());
    return dirs;
  });
  EXPECT_NE(what.find("/s1/alpha/results.json: policy: \"audit\", but "), std::string::npos) << what;
  EXPECT_NE(what.find("/s1/summary.json's run has \"competition\""), std::string::npos) << what;

  what = refusal("path", [](const fs::path& base) {
    auto dirs = mismatched(base, [](RunIdentity&) {});
    const fs::path p = fs::path(dirs[1]) / "alpha" / "results.json";
    json doc = read_json(p);
    doc["submission"] = "/elsewhere/alpha";
    write_text(p, doc.dump());
    return dirs;
  });
  EXPECT_NE(what.find("/s1/alpha/results.json: submission: \"/elsewhere/alpha\", but "), std::string::npos) << what;

  for (const std::string name : {"..", "a/../../b", "", "."}) {
    what = refusal("name", [&](const fs::path& base) {
      auto dirs = mismatched(base, [](RunIdentity&) {});
      const fs::path p = fs::path(dirs[0]) / "summary.json";
      json doc = read_json(p);
      doc["submissions"][0]["name"] = name;
      write_text(p, doc.dump());
      return dirs;
    });
    EXPECT_NE(what.find("/s0/summary.json: submissions[0].name: not a folder name: '" + name + "'"), std::string::npos) << what;
  }
}

TEST(MergeRefuses, WritingIntoOneOfTheShardFolders) {
  const fs::path base = scratch("merge-into-shard");
  const auto dirs = three_shards(base);
  const std::string before = read_text(fs::path(dirs[0]) / "summary.json");
  try {
    merge(dirs, dirs[0]);
    ADD_FAILURE() << "merged into a shard folder";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the output folder is one of the shard folders"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_text(fs::path(dirs[0]) / "summary.json"), before);
}

}  // namespace
}  // namespace kg::results

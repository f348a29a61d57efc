// The service's torch-free parts: request checks, the reward formulas, the task store, tokens and
// the metrics text.
#include "metrics.h"
#include "request.h"
#include "reward.h"
#include "store.h"
#include "tokens.h"

#include "kernelgate/policy.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace kg::serve {
namespace {

namespace fs = std::filesystem;

std::string temp_dir() {
  char tmpl[] = "/tmp/kg-serve-unit-XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  if (!d) throw std::runtime_error("mkdtemp");
  return d;
}

int error_status(const json& body, std::string* field = nullptr) {
  try {
    parse_request(body, RequestLimits{});
  } catch (const RequestError& e) {
    if (field) *field = e.field;
    return e.status;
  }
  return 0;
}

TEST(ServeRequest, SourceFormNamesTheFileByOpAndKind) {
  TaskRequest t = parse_request({{"source", "int x;"}, {"op", "add_.Tensor"}, {"kind", "cuda"}}, RequestLimits{});
  ASSERT_EQ(t.files.size(), 1u);
  EXPECT_EQ(t.files.begin()->first, "add___Tensor/add___Tensor_implementation.cu");
  EXPECT_EQ(t.ops, std::vector<std::string>{"add_.Tensor"});
  EXPECT_EQ(t.files.begin()->second, "int x;");
}

TEST(ServeRequest, AKernelBenchPairIsTwoFilesAndAName) {
  const TaskRequest t =
      parse_request({{"problem", "class Model: ..."}, {"solution", "class ModelNew: ..."}, {"name", "19_ReLU"}}, RequestLimits{});
  EXPECT_EQ(t.kernelbench, "19_ReLU");
  EXPECT_EQ(t.files, (std::map<std::string, std::string>{{"problem.py", "class Model: ..."}, {"solution.py", "class ModelNew: ..."}}));
  EXPECT_TRUE(t.ops.empty());
  const TaskRequest unnamed = parse_request({{"problem", "class Model: ..."}, {"solution", "class ModelNew: ..."}}, RequestLimits{});
  EXPECT_EQ(unnamed.kernelbench, "problem");
  EXPECT_NE(unnamed.content_hash, t.content_hash) << "the name is the op's name in the result";
  EXPECT_EQ(TaskRequest::from_stored(t.to_json()).kernelbench, "19_ReLU");
  // A files map with the same two files is a submission folder, not a pair.
  const TaskRequest folder = parse_request({{"files", t.files}}, RequestLimits{});
  EXPECT_TRUE(folder.kernelbench.empty());
  EXPECT_NE(folder.content_hash, unnamed.content_hash);
  std::string field;
  EXPECT_EQ(error_status({{"problem", "x"}}, &field), 400);
  EXPECT_EQ(field, "solution");
  EXPECT_EQ(error_status({{"problem", "x"}, {"solution", "y"}, {"kind", "cpu"}}, &field), 400);
  EXPECT_EQ(field, "kind");
  EXPECT_EQ(error_status({{"problem", std::string(2u << 20, 'x')}, {"solution", "y"}}, &field), 413);
  EXPECT_EQ(field, "problem");
}

TEST(ServeRequest, TheContentHashCoversWhatDecidesTheResultOnly) {
  const json a = {{"source", "int x;"}, {"op", "relu.default"}};
  json b = a;
  b["priority"] = 7;
  b["task_id"] = "other";
  json c = a;
  c["timing"] = false;
  json d = a;
  d["source"] = "int y;";
  const std::string h = parse_request(a, RequestLimits{}).content_hash;
  EXPECT_EQ(h, parse_request(b, RequestLimits{}).content_hash);
  EXPECT_NE(h, parse_request(c, RequestLimits{}).content_hash);
  EXPECT_NE(h, parse_request(d, RequestLimits{}).content_hash);
}

TEST(ServeRequest, PathsThatLeaveTheFolderAreRefusedByName) {
  for (const char* p : {"../a", "/abs", "a/../../b", ".git/config", "a//b", "a/./b", "a b", "a/b/c/d/e", "x\\y", ""}) {
    std::string field;
    EXPECT_EQ(error_status({{"files", {{p, "x"}}}}, &field), 400) << p;
    EXPECT_EQ(field, "files[" + json(p).dump() + "]") << p;
  }
  EXPECT_EQ(error_status({{"files", {{"relu__default/relu__default_implementation.cpp", "x"}, {"relu__default/kernelgate.toml", "y"}}}}),
            0);
}

TEST(ServeRequest, SizesAndCountsAre413AndTypesAre400) {
  RequestLimits small;
  small.max_files = 2;
  small.max_file_bytes = 4;
  auto status = [&](const json& body) {
    try {
      parse_request(body, small);
    } catch (const RequestError& e) { return e.status; }
    return 0;
  };
  EXPECT_EQ(status({{"files", {{"a", "12345"}}}}), 413);
  EXPECT_EQ(status({{"files", {{"a", "1"}, {"b", "2"}, {"c", "3"}}}}), 413);
  EXPECT_EQ(status({{"source", "12345"}, {"op", "relu.default"}}), 413);
  EXPECT_EQ(status({{"files", {{"a", 1}}}}), 400);
  EXPECT_EQ(status({{"files", {{"a", std::string("a\0b", 3)}}}}), 400);
  EXPECT_EQ(status({{"source", "x"}, {"op", "relu.default"}, {"timing", "yes"}}), 400);
  EXPECT_EQ(status({{"source", "x"}, {"op", "relu.default"}, {"priority", 1.5}}), 400);
  EXPECT_EQ(status({{"source", "x"}, {"op", "relu.default"}, {"extra", 1}}), 400);
  EXPECT_EQ(status({{"source", "x"}, {"op", "relu.default"}, {"kind", "nvrtc"}}), 400);
  EXPECT_EQ(status({{"source", "x"}}), 400);
}

TEST(ServeRequest, NestingIsRefusedBeforeParsing) {
  EXPECT_THROW(check_nesting(std::string(100000, '[') + std::string(100000, ']'), 32), RequestError);
  EXPECT_NO_THROW(check_nesting("{\"a\": \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"}", 4));  // inside a string
  EXPECT_THROW(parse_body("{\"a\": ", RequestLimits{}), RequestError);
  EXPECT_THROW(parse_body("[1, 2]", RequestLimits{}), RequestError);
  EXPECT_THROW(parse_body(std::string("\xff\xfe{}", 4), RequestLimits{}), RequestError);
}

TEST(ServeRequest, TaskIds) {
  EXPECT_TRUE(valid_task_id("run-7.step_3"));
  EXPECT_FALSE(valid_task_id(".hidden"));
  EXPECT_FALSE(valid_task_id("a/b"));
  EXPECT_FALSE(valid_task_id(std::string(129, 'a')));
  const std::string a = new_task_id(), b = new_task_id();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
}

json op(const std::string& verdict, double speedup = 0, const std::string& rule = "", const std::string& category = "") {
  json o = {{"op", "x.default"},           {"kind", "cpu"},
            {"verdict", verdict},          {"tests", {{"passed", verdict == "pass" ? 1 : 0}, {"total", 1}}},
            {"violations", json::array()}, {"failures", json::array()}};
  o["speedup"] = speedup > 0 ? json(speedup) : json();
  if (!rule.empty()) o["violations"].push_back({{"rule", rule}, {"evidence", "e"}});
  if (!category.empty()) o["failures"].push_back({{"category", category}});
  return o;
}

policy::Policy with_preset(const std::string& preset) {
  policy::Policy p;
  p.reward_preset = preset;
  return p;
}

TEST(ServeReward, KevinIsPointThreeForCorrectPlusTheCappedSpeedup) {
  const json r = reward_of(json::array({op("pass", 2.0)}), with_preset("kevin"));
  EXPECT_DOUBLE_EQ(r["score"].get<double>(), 0.3 + 2.0);
  EXPECT_DOUBLE_EQ(reward_of(json::array({op("pass", 50.0)}), with_preset("kevin"))["score"].get<double>(), 0.3 + 10.0);
  EXPECT_DOUBLE_EQ(reward_of(json::array({op("fail", 0, "", "value_mismatch")}), with_preset("kevin"))["score"].get<double>(), 0.0);
}

TEST(ServeReward, DrKernelIsHalfCorrectHalfTheSpeedupClippedToThree) {
  EXPECT_DOUBLE_EQ(reward_of(json::array({op("pass", 2.0)}), with_preset("drkernel"))["score"].get<double>(), 0.5 + 0.5 * 2.0);
  EXPECT_DOUBLE_EQ(reward_of(json::array({op("pass", 7.0)}), with_preset("drkernel"))["score"].get<double>(), 0.5 + 0.5 * 3.0);
}

TEST(ServeReward, LogSpeedupIsGatedOnCorrectness) {
  EXPECT_NEAR(reward_of(json::array({op("pass", 2.0)}), with_preset("log-speedup"))["score"].get<double>(), std::log(2.0), 1e-12);
  EXPECT_NEAR(reward_of(json::array({op("pass", 0.5)}), with_preset("log-speedup"))["score"].get<double>(), std::log(0.5), 1e-12);
  EXPECT_DOUBLE_EQ(reward_of(json::array({op("fail")}), with_preset("log-speedup"))["score"].get<double>(), 0.0);
}

TEST(ServeReward, ARuleCostsThePenaltyAndWeightsOverrideThePreset) {
  const json r = reward_of(json::array({op("rejected", 0, "replayed_output")}), with_preset("kevin"));
  EXPECT_DOUBLE_EQ(r["score"].get<double>(), -1.0);
  EXPECT_EQ(r["rules"], json::array({"replayed_output"}));
  EXPECT_TRUE(r["rule_penalty_applied"].get<bool>());
  EXPECT_EQ(r["verdict"], "rejected");
  policy::Policy p = with_preset("kevin");
  p.reward_rule_penalty = 0.25;
  p.reward_correct_weight = 1.0;
  EXPECT_DOUBLE_EQ(reward_of(json::array({op("rejected", 0, "replayed_output")}), p)["score"].get<double>(), -0.25);
  EXPECT_DOUBLE_EQ(reward_of(json::array({op("pass", 1.5)}), p)["score"].get<double>(), 1.0 + 1.5);
  // A flagged rule (verdict pass) is reported but costs nothing.
  const json flagged = reward_of(json::array({op("pass", 1.0, "async_escape")}), with_preset("kevin"));
  EXPECT_FALSE(flagged["rule_penalty_applied"].get<bool>());
  EXPECT_DOUBLE_EQ(flagged["score"].get<double>(), 1.3);
}

TEST(ServeReward, ComponentsOverSeveralOps) {
  const json two = json::array({op("pass", 4.0), op("pass", 1.0)});
  const json r = reward_of(two, with_preset("kevin"));
  EXPECT_DOUBLE_EQ(r["speedup"].get<double>(), 2.0);  // geomean
  EXPECT_EQ(r["correct"], 1);
  const json mixed = reward_of(json::array({op("pass", 4.0), op("fail", 0, "", "compile_error")}), with_preset("kevin"));
  EXPECT_EQ(mixed["correct"], 0);
  EXPECT_EQ(mixed["compiled"], 0);
  EXPECT_DOUBLE_EQ(mixed["correct_fraction"].get<double>(), 0.5);
  EXPECT_TRUE(mixed["speedup"].is_null());
  EXPECT_EQ(mixed["verdict"], "fail");
  EXPECT_EQ(reward_of(json::array(), with_preset("kevin"))["verdict"], "error");
  const json untimed = reward_of(json::array({op("pass")}), with_preset("kevin"));
  EXPECT_TRUE(untimed["speedup"].is_null());
  EXPECT_DOUBLE_EQ(untimed["score"].get<double>(), 0.3);
}

TEST(ServeReward, PresetsAreAPolicySetting) {
  const policy::Policy p = policy::parse("name = \"t\"\n[reward]\npreset = \"drkernel\"\nspeedup_cap = 5\n", "t.toml");
  EXPECT_EQ(p.reward_preset, "drkernel");
  EXPECT_DOUBLE_EQ(p.reward_speedup_cap, 5.0);
  EXPECT_DOUBLE_EQ(reward_of(json::array({op("pass", 4.0)}), p)["score"].get<double>(), 0.5 + 0.5 * 4.0);
  try {
    policy::parse("name = \"t\"\n[reward]\npreset = \"kevn\"\n", "t.toml");
    FAIL() << "an unknown preset was accepted";
  } catch (const policy::PolicyError& e) {
    EXPECT_NE(std::string(e.what()).find("t.toml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("reward.preset"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kevin"), std::string::npos) << e.what();
  }
  EXPECT_EQ(policy::parse(p.to_toml(), "again"), p);
}

TaskRequest request(const std::string& id, const std::string& source) {
  TaskRequest t = parse_request({{"source", source}, {"op", "relu.default"}}, RequestLimits{});
  t.task_id = id;
  return t;
}

TEST(ServeStore, IdsAreIdempotentAndSurviveReopening) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/tasks.sqlite3";
  {
    Store s(path);
    StoredTask existing;
    EXPECT_EQ(s.insert(request("a", "x"), "tok", 1.0, nullptr), Store::Insert::Added);
    EXPECT_EQ(s.insert(request("a", "x"), "tok", 2.0, &existing), Store::Insert::SameTask);
    EXPECT_EQ(existing.created, 1.0);
    EXPECT_EQ(s.insert(request("a", "y"), "tok", 3.0, &existing), Store::Insert::Conflict);
    EXPECT_EQ(s.insert(request("b", "y"), "tok", 4.0, nullptr), Store::Insert::Added);
    EXPECT_EQ(s.insert(request("c", "z"), "other", 5.0, nullptr), Store::Insert::Added);
    s.set_running("a", 6.0);
    s.set_running("b", 6.0);
    s.set_decided("b", "completed", "{\"ops\": []}", "", 7.0);
    EXPECT_EQ(s.active_for("tok"), 1);  // a running; b decided
  }
  Store s(path);  // as after a kill -9: what was running goes back to the queue, in admission order
  const std::vector<StoredTask> again = s.requeue_unfinished();
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].id, "a");
  EXPECT_EQ(again[0].status, "queued");
  EXPECT_EQ(again[0].request.files, request("a", "x").files);
  EXPECT_EQ(again[1].id, "c");
  const auto b = s.get("b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->status, "completed");
  EXPECT_EQ(b->result, "{\"ops\": []}");
  EXPECT_EQ(s.expire(7.5), std::vector<std::string>{"b"});
  EXPECT_FALSE(s.get("b"));
  fs::remove_all(dir);
}

TEST(ServeStore, AnUnusablePathIsNamed) {
  try {
    Store s("/nonexistent-dir/tasks.sqlite3");
    FAIL();
  } catch (const std::runtime_error& e) { EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/tasks.sqlite3"), std::string::npos); }
}

TEST(ServeTokens, BearerTokensFromTheFile) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/tokens";
  std::ofstream(path) << "# comment\n\n  token-one-0123456789  \ntoken-two-0123456789\n";
  const Tokens t = Tokens::from_file(path);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_FALSE(t.check("Bearer token-one-0123456789").empty());
  EXPECT_NE(t.check("Bearer token-one-0123456789"), t.check("Bearer token-two-0123456789"));
  EXPECT_EQ(t.check("Bearer token-one-0123456789").find("token"), std::string::npos);  // an id, not the token
  EXPECT_TRUE(t.check("Bearer token-one-012345678").empty());
  EXPECT_TRUE(t.check("token-one-0123456789").empty());
  EXPECT_TRUE(t.check("").empty());
  std::ofstream(path) << "short\n";
  EXPECT_THROW(Tokens::from_file(path), std::runtime_error);
  std::ofstream(path) << "# nothing\n";
  EXPECT_THROW(Tokens::from_file(path), std::runtime_error);
  EXPECT_THROW(Tokens::from_file(dir + "/missing"), std::runtime_error);
  fs::remove_all(dir);
}

TEST(ServeMetrics, PrometheusText) {
  Metrics m;
  m.request("/v1/evaluate", 202, 0.002);
  m.request("/v1/evaluate", 429, 0.0005);
  m.task_decided("completed", "rejected", {"trivial_output"}, 0.5, 3.0);
  m.rejected_admission("queue_full");
  const std::string t = m.text({{"kernelgate_queue_depth", 3}});
  EXPECT_NE(t.find("kernelgate_queue_depth 3\n"), std::string::npos) << t;
  EXPECT_NE(t.find("kernelgate_http_requests_total{route=\"/v1/evaluate\",code=\"429\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("kernelgate_http_request_seconds_bucket{route=\"/v1/evaluate\",le=\"0.001\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("kernelgate_http_request_seconds_bucket{route=\"/v1/evaluate\",le=\"0.005\"} 2\n"), std::string::npos) << t;
  EXPECT_NE(t.find("kernelgate_rules_total{rule=\"trivial_output\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("kernelgate_verdicts_total{verdict=\"rejected\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("kernelgate_task_run_seconds_count 1\n"), std::string::npos) << t;
}

}  // namespace
}  // namespace kg::serve

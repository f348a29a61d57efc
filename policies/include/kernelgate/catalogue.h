// The catalogue: every rule, failure category and verdict kernelgate knows, as enums and one
// table each. Parsing, evaluation, the audit and the JSON writer take their ids from here;
// README.md, docs/rules.md, docs/verdicts.md and docs/threats.md list exactly these ids (a test
// checks it). Torch-free.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace kg::policy {

// The rules, in docs/threats.md's order (section B, then the sandbox's rule of section A).
enum class Rule {
  FallbackToTorch,
  ForbiddenLibrary,
  TrivialOutput,
  UnwrittenOutput,
  InputMutated,
  ReplayedOutput,
  StatefulOutput,
  NondeterministicOutput,
  AsyncEscape,
  ImpossibleSpeed,
  TimerTampering,
  CacheTampering,
  ShapeSpecialisation,
  NoDeviceWork,
  ProtocolViolation,
  SandboxViolation,
};

// Why one judged call (or the build) failed: a failure's `category` in results.json.
enum class Category {
  DtypeMismatch,
  ShapeMismatch,
  NanMask,
  InfMask,
  ValueMismatch,
  InputMutated,
  Aliasing,
  CompileError,
  RuntimeError,
  Crash,
  Timeout,
  MemoryLimit,
};

// An op's `verdict` in results.json.
enum class Verdict { Pass, Fail, Rejected, Error };

// Where a rule's evidence comes from; an op reaches some of these and not others. A bit set.
enum Layer : unsigned {
  kStatic = 1u << 0,    // the built artifact, read as bytes before any of it runs
  kCalls = 1u << 1,     // every judged call (samples, trials, timed calls)
  kRunner = 1u << 2,    // the runner's observers and the sandbox's record around each call
  kTrials = 1u << 3,    // fresh-input rounds and identical repeats after every sample passed
  kTimed = 1u << 4,     // the timed calls
  kCudaHost = 1u << 5,  // the cuda kind's host code on a GPU, under the runner's device work watch
};
// Every layer bit, in the order the audit reports them.
inline constexpr unsigned kLayers[] = {kStatic, kCalls, kRunner, kTrials, kTimed, kCudaHost};
// "static", "calls", "runner", "trials", "timing", "cuda host"; "" for anything else.
const char* layer_name(unsigned layer);

struct RuleInfo {
  Rule rule;
  const char* id;       // "fallback_to_torch": profiles, results.json, the audit
  const char* threats;  // the docs/threats.md items it answers ("B3, B4")
  unsigned layers;      // Layer bits: where its evidence comes from
  const char* checked;  // what is checked, as the audit report says it
  const char* doc;      // one line: what the rule catches
};

struct CategoryInfo {
  Category category;
  const char* id;   // "value_mismatch"
  const char* doc;  // one line
};

struct VerdictInfo {
  Verdict verdict;
  const char* id;   // "pass"
  const char* doc;  // one line
};

// The tables, in enum order.
const std::vector<RuleInfo>& rule_catalogue();
const std::vector<CategoryInfo>& category_catalogue();
const std::vector<VerdictInfo>& verdict_catalogue();

const RuleInfo& rule_info(Rule r);
const char* rule_id(Rule r);
std::optional<Rule> rule_from_id(std::string_view id);

const CategoryInfo& category_info(Category c);
const char* category_id(Category c);
std::optional<Category> category_from_id(std::string_view id);

const VerdictInfo& verdict_info(Verdict v);
const char* verdict_id(Verdict v);
std::optional<Verdict> verdict_from_id(std::string_view id);

}  // namespace kg::policy

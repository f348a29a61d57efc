// TomlReader: the TOML reader policies and the launch table share (toml_reader.h). Every error
// carries the file, line, column, key and message, and says them in one line.
#include "kernelgate/toml_reader.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace kg {
namespace {

constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();

TomlError error_of(void (*fn)()) {
  try {
    fn();
  } catch (const TomlError& e) { return e; }
  ADD_FAILURE() << "no TomlError";
  return TomlError(TomlError::Kind::Value, "", 0, 0, "", "");
}

TEST(TomlReader, ValueErrorNamesFileLineColumnAndKey) {
  TomlError e = error_of([] {
    const toml::table root = parse_toml("a = 1\nb = \"x\"\n", "f.toml", kNoLimit);
    TomlReader("f.toml").integer(*root.get("b"), "b", 0, 10);
  });
  EXPECT_EQ(e.kind, TomlError::Kind::Value);
  EXPECT_EQ(e.file, "f.toml");
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.column, 5);
  EXPECT_EQ(e.key, "b");
  EXPECT_EQ(e.message, "expected an integer, got a string");
  EXPECT_STREQ(e.what(), "f.toml:2:5: key 'b': expected an integer, got a string");
}

TEST(TomlReader, SyntaxErrorCarriesTheKeyBeingWritten) {
  TomlError e = error_of([] { parse_toml("[t]\nx = 1\ny = \n", "f.toml", kNoLimit); });
  EXPECT_EQ(e.kind, TomlError::Kind::Syntax);
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.key, "t.y");
  EXPECT_EQ(std::string(e.what()).rfind("f.toml:3:", 0), 0u) << e.what();
  EXPECT_NE(std::string(e.what()).find(": TOML syntax error: "), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("(at key 't.y')"), std::string::npos) << e.what();
  // A header without a key is an error, not an assertion inside toml++.
  EXPECT_EQ(error_of([] { parse_toml("[=x]\n", "f.toml", kNoLimit); }).kind, TomlError::Kind::Syntax);
}

TEST(TomlReader, DocumentOverTheLimitIsRefusedBeforeParsing) {
  EXPECT_NO_THROW(parse_toml("a = 1\n", "f.toml", 6));
  TomlError e = error_of([] { parse_toml("a = 12\n", "f.toml", 6); });
  EXPECT_EQ(e.line, 0);
  EXPECT_STREQ(e.what(), "f.toml: the document is 7 bytes, over the limit of 6 bytes");
}

TEST(TomlReader, TypedGetters) {
  const toml::table root = parse_toml("s = \"x\"\nb = true\ni = 7\nf = 2.5\nt = {}\na = [1]\n", "f.toml", kNoLimit);
  TomlReader r("f.toml");
  EXPECT_EQ(r.string(*root.get("s"), "s"), "x");
  EXPECT_TRUE(r.boolean(*root.get("b"), "b"));
  EXPECT_EQ(r.integer(*root.get("i"), "i", 7, 7), 7);
  EXPECT_EQ(r.number(*root.get("f"), "f"), 2.5);
  EXPECT_EQ(r.number(*root.get("i"), "i"), 7.0);  // an integer where a number is meant
  EXPECT_TRUE(r.table(*root.get("t"), "t").empty());
  EXPECT_EQ(r.array(*root.get("a"), "a").size(), 1u);
  EXPECT_THROW(r.string(*root.get("b"), "b"), TomlError);
  EXPECT_THROW(r.boolean(*root.get("i"), "i"), TomlError);
  EXPECT_THROW(r.integer(*root.get("i"), "i", 8, 9), TomlError);
  EXPECT_THROW(r.table(*root.get("a"), "a"), TomlError);
  EXPECT_THROW(r.array(*root.get("t"), "t"), TomlError);
}

TEST(TomlReader, RangeErrors) {
  const toml::table root = parse_toml("zero = 0\nbig = 1e300\nnan = nan\n", "f.toml", kNoLimit);
  TomlReader r("f.toml");
  const NumberRange open{0, true, 10, "why not"};
  try {
    r.number(*root.get("zero"), "zero", open);
    FAIL();
  } catch (const TomlError& e) { EXPECT_EQ(e.message, "0 is out of range (0 < x <= 10): why not"); }
  try {
    r.number(*root.get("nan"), "nan", open);
    FAIL();
  } catch (const TomlError& e) { EXPECT_EQ(e.message, "nan is out of range (0 < x <= 10): must be a finite number"); }
  EXPECT_THROW(r.number(*root.get("big"), "big", open), TomlError);
  EXPECT_EQ(describe(NumberRange{1, false, double(int64_t{1} << 24), nullptr}), "1 <= x <= 16777216");
}

TEST(TomlReader, UnknownKeysAreNamedWithASuggestion) {
  const toml::table root = parse_toml("[sec]\nwarmpu = 1\n", "f.toml", kNoLimit);
  TomlReader r("f.toml");
  EXPECT_NO_THROW(r.only_keys(root, "", {"sec"}));
  try {
    r.only_keys(*root.get("sec")->as_table(), "sec", {"warmup", "reps"});
    FAIL();
  } catch (const TomlError& e) {
    EXPECT_STREQ(e.what(), "f.toml:2:1: key 'sec.warmpu': unknown key (did you mean 'warmup'?); known keys in [sec]: warmup, reps");
  }
}

TEST(TomlReader, KeyPathsAndSuggestions) {
  EXPECT_EQ(toml_key_path("", "a"), "a");
  EXPECT_EQ(toml_key_path("op", "mm.default"), "op.\"mm.default\"");
  EXPECT_EQ(toml_key_path("op.\"mm.default\"", "f32"), "op.\"mm.default\".f32");
  EXPECT_EQ(did_you_mean("f23", {"f16", "f32"}), " (did you mean 'f32'?)");
  EXPECT_EQ(did_you_mean("fallback", {"fallback_to_torch"}), " (did you mean 'fallback_to_torch'?)");
  EXPECT_EQ(did_you_mean("zzzzzz", {"f16", "f32"}), "");
  EXPECT_EQ(comma_list({"a", "b"}), "a, b");
  EXPECT_EQ(shortest_decimal(3600), "3600");
  EXPECT_EQ(shortest_decimal(1e9), "1e+09");
  EXPECT_EQ(shortest_decimal(-1e-6), "-1e-06");
}

}  // namespace
}  // namespace kg

// The sanitisers every written or printed text passes (kernelgate/text_safety.h), and the JSON
// documents they guard: no byte sequence may stop results.json or audit.json from being written.
#include "kernelgate/harness.h"
#include "kernelgate/policy.h"
#include "kernelgate/text_safety.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

using kg::text::Newlines;
using kg::text::terminal_safe;
using kg::text::utf8_escaped;
using nlohmann::json;

std::string escaped(const std::string& s) {
  bool changed = false;
  std::string out = utf8_escaped(s, &changed);
  EXPECT_EQ(changed, out != s) << out;
  return out;
}

TEST(Utf8Escaped, KeepsValidTextOfEveryLength) {
  const std::string text = "relu a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \xef\xbf\xbf \xf4\x8f\xbf\xbf";  // 1-4 bytes, U+FFFF, U+10FFFF
  bool changed = true;
  EXPECT_EQ(utf8_escaped(text, &changed), text);
  EXPECT_FALSE(changed);
  EXPECT_EQ(utf8_escaped(""), "");
}

TEST(Utf8Escaped, EscapesEachInvalidByte) {
  EXPECT_EQ(escaped("a\xff\xfe"
                    "b"),
            "a\\xff\\xfeb");
  EXPECT_EQ(escaped("\x80"), "\\x80");                             // a lone continuation byte
  EXPECT_EQ(escaped("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(escaped("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");           // overlong, three bytes
  EXPECT_EQ(escaped("\xf0\x82\x82\xac"), "\\xf0\\x82\\x82\\xac");  // overlong, four bytes
  EXPECT_EQ(escaped("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // surrogate U+D800
  EXPECT_EQ(escaped("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(escaped("\xf5\x80\x80\x80"), "\\xf5\\x80\\x80\\x80");
  EXPECT_EQ(escaped("x\xe2\x82"), "x\\xe2\\x82");                  // truncated at the end
  EXPECT_EQ(escaped("\xe2\x82x\xc3\xa9"), "\\xe2\\x82x\xc3\xa9");  // truncated, then valid text resumes
}

TEST(TerminalSafe, EscapesControlCharactersAndKeepsText) {
  EXPECT_EQ(terminal_safe("\x1b[2J\rrelu.default  pass"), "\\x1b[2J\\x0drelu.default  pass");
  EXPECT_EQ(terminal_safe("a\tb\nc\bd\x7f"), "a\tb\\x0ac\\x08d\\x7f");
  EXPECT_EQ(terminal_safe("a\nb\x1b", Newlines::Keep), "a\nb\\x1b");
  EXPECT_EQ(terminal_safe("\xc2\x9b"
                          "31m"),
            "\\xc2\\x9b31m");  // C1 CSI, encoded as UTF-8
  EXPECT_EQ(terminal_safe("\x9b"
                          "31m"),
            "\\x9b31m");  // C1 as a raw byte
  EXPECT_EQ(terminal_safe("ok\xe2\x80\xae"
                          "ssap"),
            "ok\\xe2\\x80\\xaessap");  // right-to-left override
  EXPECT_EQ(terminal_safe("na\xc3\xafve \xe2\x82\xac"), "na\xc3\xafve \xe2\x82\xac");
  bool changed = true;
  terminal_safe("plain text", Newlines::Escape, &changed);
  EXPECT_FALSE(changed);
}

TEST(PythonQuoted, WritesTheTraceFormatsStringLiteral) {
  EXPECT_EQ(kg::text::python_quoted("relu"), "'relu'");
  EXPECT_EQ(kg::text::python_quoted("a'b\\c"), "'a\\'b\\\\c'");
  EXPECT_EQ(kg::text::python_quoted("\n\r\t\x01\x1b\x7f"), "'\\n\\r\\t\\x01\\x1b\\x7f'");
  EXPECT_EQ(kg::text::python_quoted("\xc3\xa9\xc2\x9b\xff"), "'\xc3\xa9\xc2\x9b\xff'");  // every other byte as it is
}

TEST(QuotedExcerpt, ShortensAndEscapesAsciiControls) {
  EXPECT_EQ(kg::text::quoted_excerpt("abc", 3), "'abc'");
  EXPECT_EQ(kg::text::quoted_excerpt("abcdef", 3), "'abc...'");
  EXPECT_EQ(kg::text::quoted_excerpt("a\nb\x7f'\\", 24), "'a\\x0ab\\x7f'\\'");
  EXPECT_EQ(kg::text::quoted_excerpt("\xe2\x82\xac", 2), "'\xe2\x82...'");  // cut by bytes, kept as they are
}

kg::harness::Report report_with_bytes(const std::string& bad) {
  kg::harness::Report rep;
  rep.version = "test";
  rep.submission = "/sub/" + bad;
  rep.problems.push_back({"folder" + bad, "not an op folder name"});
  kg::harness::OpResult r;
  r.op = "relu.default";
  r.kind = "cpu";
  r.verdict = kg::policy::Verdict::Error;
  r.error = "compilation failed: " + bad;
  r.build_log = "error: #error " + bad;
  r.failure_traits["trait" + bad] = 1;  // an object key
  kg::harness::Failure f;
  f.category = kg::policy::Category::Crash;
  f.message = "kernel threw: " + bad;
  r.failures.push_back(f);
  rep.ops.push_back(r);
  kg::harness::OpResult ok;
  ok.op = "add.Tensor";
  ok.verdict = kg::policy::Verdict::Pass;
  rep.ops.push_back(ok);
  return rep;
}

TEST(ResultsJson, InvalidUtf8IsEscapedAndListedNotFatal) {
  const std::string bad = "\xff\xfe\xc0\xaf";
  std::string text;
  ASSERT_NO_THROW(text = kg::harness::report_json(report_with_bytes(bad)));
  const json doc = json::parse(text);
  EXPECT_EQ(doc["submission"], "/sub/\\xff\\xfe\\xc0\\xaf");
  EXPECT_EQ(doc["ops"][0]["error"], "compilation failed: \\xff\\xfe\\xc0\\xaf");
  EXPECT_EQ(doc["ops"][0]["failures"][0]["evidence"]["message"], "kernel threw: \\xff\\xfe\\xc0\\xaf");
  EXPECT_TRUE(doc["ops"][0]["failure_traits"].contains("trait\\xff\\xfe\\xc0\\xaf"));
  EXPECT_EQ(doc["ops"][1]["verdict"], "pass");
  ASSERT_TRUE(doc.contains("non_utf8_escaped"));
  const json& fields = doc["non_utf8_escaped"]["fields"];
  for (const char* where : {"/submission", "/problems/0/folder", "/ops/0/error", "/ops/0/build_log", "/ops/0/failures/0/evidence/message",
                            "/ops/0/failure_traits/trait\\xff\\xfe\\xc0\\xaf"})
    EXPECT_NE(std::find(fields.begin(), fields.end(), where), fields.end()) << where << " not in " << fields.dump();
  EXPECT_EQ(fields.size(), 6u) << fields.dump();
}

TEST(ResultsJson, ValidTextIsUnchangedAndCarriesNoNote) {
  const std::string text = kg::harness::report_json(report_with_bytes("caf\xc3\xa9"));
  const json doc = json::parse(text);
  EXPECT_FALSE(doc.contains("non_utf8_escaped"));
  EXPECT_EQ(doc["submission"], "/sub/caf\xc3\xa9");
}

TEST(AuditJson, InvalidUtf8IsEscaped) {
  const kg::policy::Policy policy = kg::policy::load("audit");
  std::string text;
  ASSERT_NO_THROW(text = kg::harness::audit_json(report_with_bytes("\xfe"), policy, "2024-01-01T00:00:00Z"));
  const json doc = json::parse(text);
  EXPECT_EQ(doc["ops"][0]["error"], "compilation failed: \\xfe");
  EXPECT_TRUE(doc.contains("non_utf8_escaped"));
}

TEST(TerminalTable, NoControlCharacterFromASubmissionReachesTheTerminal) {
  kg::harness::Report rep = report_with_bytes("\x1b[2J\rrelu.default  pass\n\x9b");
  const std::string table = kg::harness::report_table(rep);
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
  EXPECT_EQ(table.find('\r'), std::string::npos) << table;
  EXPECT_EQ(table.find('\x9b'), std::string::npos) << table;
  EXPECT_NE(table.find("\\x1b[2J\\x0drelu.default  pass"), std::string::npos) << table;
  const std::string feedback = kg::harness::report_feedback(rep);
  EXPECT_EQ(feedback.find('\x1b'), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("\\xNN"), std::string::npos) << "the feedback says what the escapes mean";
  const std::string md = kg::harness::audit_markdown(rep, kg::policy::load("audit"), "now");
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
}

}  // namespace

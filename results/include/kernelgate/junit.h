// JUnit XML of an evaluation (`--junit FILE` on eval and audit), so that CI systems show kernel
// verdicts natively: one testsuite per submission, one testcase per op x sample. Torch-free: it
// reads results.json documents; the samples an op was judged on come from the caller.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace kg::results {

using json = nlohmann::json;

struct JunitSubmission {
  std::string name;  // the testsuite's name: the submission's folder
  json results;      // its results.json document
};

// The samples `op` was judged on, in suite order, each in trace syntax as results.json writes a
// sample ("cnt: 1, ((T([8], f32),), {})"); position i is sample index i. Empty when unknown: the
// testcases are then named by index alone.
using SampleCalls = std::function<std::vector<std::string>(const std::string& op)>;

// The whole document. Per op: a testcase per sample (passed; <failure> with the category and a
// one-line evidence; <skipped> with the reason, also for samples never run because the op did not
// build or could not be evaluated), a testcase per rule finding (<failure type="rule:ID">), one
// per failure tied to no sample (a compile error), and one <error> for an op kernelgate could not
// evaluate. Throws std::runtime_error "NAME: FIELD: problem" for a malformed document.
std::string junit_xml(const std::vector<JunitSubmission>& submissions, const SampleCalls& samples);

// Text for an XML attribute or element: &, <, >, " and ' as entities, control characters (C0
// but tab, and newline where `keep_newlines`; DEL; C1) removed.
std::string xml_text(const std::string& s, bool keep_newlines = false);

}  // namespace kg::results

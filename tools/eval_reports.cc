#include "eval_reports.h"

#include "kernelgate/results.h"

#include <filesystem>
#include <stdexcept>

namespace kg::cli {
namespace {

// The samples an op is judged on, as results.json writes a sample; empty when the suite does not
// know the op (the testcases are then named by index).
results::SampleCalls suite_sample_calls(const std::string& suite) {
  return [suite](const std::string& op) {
    std::vector<std::string> calls;
    try {
      for (const harness::Sample& s : harness::suite_samples(suite, op)) calls.push_back(trace::format_call(s.call));
    } catch (const std::exception&) { calls.clear(); }
    return calls;
  };
}

results::RunIdentity identity_of(const EvalCli& cli, const harness::Report& report) {
  results::RunIdentity id;
  id.kernelgate_version = report.version;
  id.torch_version = report.torch_version;
  id.device = report.device;
  id.suite = report.suite;
  id.policy = report.policy;
  id.seed = report.seed;
  id.timing = cli.opt.timing;
  id.ops = cli.opt.ops;
  return id;
}

}  // namespace

bool write_junit(const std::string& path, const std::vector<results::JunitSubmission>& submissions, const std::string& suite,
                 const char* cmd) {
  std::string xml;
  try {
    xml = results::junit_xml(submissions, suite_sample_calls(suite));
  } catch (const std::exception& e) {
    print_error(cmd, path + ": " + e.what());
    return false;
  }
  return write_text_file(path, xml, cmd);
}

bool write_submission_reports(const EvalCli& cli, const harness::Report& report, bool summaries, const char* cmd) {
  const std::filesystem::path out = cli.opt.out_dir;
  results::BatchEntry entry;
  entry.name = cli.opt.submission.empty() ? "self-check" : std::filesystem::path(cli.opt.submission).filename().string();
  try {
    entry.results = results::read_document((out / "results.json").string());
    if (summaries) {
      // Rendered before either is written, so a malformed document leaves neither.
      const std::string csv = results::batch_summary_csv({entry});
      const std::string md = results::submission_summary_markdown(identity_of(cli, report), entry);
      if (!write_text_file((out / "summary.csv").string(), csv, cmd) || !write_text_file((out / "summary.md").string(), md, cmd))
        return false;
    }
  } catch (const std::exception& e) {
    print_error(cmd, e.what());
    return false;
  }
  return cli.junit_file.empty() || write_junit(cli.junit_file, {{entry.name, entry.results}}, cli.opt.suite, cmd);
}

}  // namespace kg::cli
